import { Type } from '@sinclair/typebox'
import { defineTool } from './types.ts'
import { Nullable, OneOfObjects, strict, Url } from './schemas.ts'

const Saved = Type.Object({
  monitorId: Type.String(),
  url: Type.String(),
  origin: Type.String(),
  appId: Type.String(),
  schedule: Type.Union([Type.Literal('daily'), Type.Literal('weekly')]),
  hour: Type.Integer(),
  weekday: Nullable(Type.Integer()),
  notifyOn: Type.Union([Type.Literal('regression'), Type.Literal('any')]),
  enabled: Type.Boolean(),
  nextRunAt: Nullable(Type.String()),
  lastRunAt: Nullable(Type.String()),
  lastScanId: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  created: Type.Boolean(),
  changed: Type.Boolean(),
})

const Removed = Type.Object({ origin: Type.String(), removed: Type.Boolean() })

export const monitorApp = defineTool({
  name: 'monitor_app',
  description:
    "Scan an app's page daily or weekly and record regressions (lower score, checks gone to warn or fail, new findings). One " +
    'monitor per origin: calling again updates it, omitted arguments kept. Never notifies: get_account lists them.',
  plan: 'launch',
  // Removing a monitor deletes its run history; every call is safe to repeat.
  annotations: { title: 'Monitor an app', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: Type.Object(
    {
      url: Url,
      schedule: Type.Optional(
        Type.Union([Type.Literal('daily'), Type.Literal('weekly')], {
          description: 'Required to create.',
        }),
      ),
      hour: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 23,
          description: 'UTC.',
        }),
      ),
      weekday: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 6,
          description: '0 is Sunday.',
        }),
      ),
      notifyOn: Type.Optional(
        Type.Union([Type.Literal('regression'), Type.Literal('any')], {
          description: 'Default regression.',
        }),
      ),
      enabled: Type.Optional(Type.Boolean({ description: 'false pauses it.' })),
      remove: Type.Optional(Type.Boolean({ description: 'Deletes it and its history.' })),
    },
    strict,
  ),
  output: OneOfObjects([Saved, Removed], 'The monitor; with remove, {origin, removed}.'),
  run: (input, ctx) =>
    input.remove ? ctx.services.monitors.remove(ctx.principal, input) : ctx.services.monitors.save(ctx.principal, input),
})
