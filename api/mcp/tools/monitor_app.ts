import { Type } from '@sinclair/typebox'
import { defineTool } from './types.ts'
import { Nullable, OneOfObjects, strict, Url, When } from './schemas.ts'

const Saved = Type.Object({
  monitorId: Type.String(),
  url: Type.String(),
  origin: Type.String(),
  appId: Type.String(),
  schedule: Type.Union([Type.Literal('daily'), Type.Literal('weekly')]),
  hour: Type.Integer(),
  weekday: Nullable(Type.Integer(), 'Weekly only: 0 (Sunday) to 6 (Saturday); null for daily.'),
  notifyOn: Type.Union([Type.Literal('regression'), Type.Literal('any')]),
  enabled: Type.Boolean(),
  nextRunAt: Nullable(When('The next run; null while paused')),
  lastRunAt: Nullable(When('The last run')),
  lastScanId: Nullable(Type.String()),
  createdAt: When('When the monitor was created'),
  updatedAt: When('When it last changed'),
  created: Type.Boolean({ description: 'This call created the monitor.' }),
  changed: Type.Boolean({ description: 'This call changed what was stored.' }),
})

const Removed = Type.Object({
  origin: Type.String(),
  removed: Type.Boolean({ description: 'false when the app had no monitor.' }),
})

export const monitorApp = defineTool({
  name: 'monitor_app',
  description:
    "Scan an app's page on a schedule (daily or weekly, at an hour in UTC) and record regressions: a lower score, checks that went " +
    'from pass to warn or fail, new findings. One monitor per app (origin): calling again updates it, and arguments left out keep ' +
    'their current values; enabled false pauses it; remove true deletes it with its history. Returns the monitor with nextRunAt. ' +
    'Regressions are recorded, never sent: get_account lists each monitor with its last score and open regressions.',
  plan: 'launch',
  // Removing a monitor deletes its run history; every call is safe to repeat.
  annotations: { title: 'Monitor an app', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: Type.Object(
    {
      url: Url,
      schedule: Type.Optional(
        Type.Union([Type.Literal('daily'), Type.Literal('weekly')], {
          description: 'How often to scan. Required when the app has no monitor yet.',
        }),
      ),
      hour: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 23,
          description: 'Hour of the day (UTC) the scan runs. Default on creation: a stable hour derived from the URL.',
        }),
      ),
      weekday: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 6,
          description: 'Weekly only: 0 (Sunday) to 6 (Saturday). Default on creation: a stable day derived from the URL.',
        }),
      ),
      notifyOn: Type.Optional(
        Type.Union([Type.Literal('regression'), Type.Literal('any')], {
          description: "What a run records as an alert: 'regression' (default) only what got worse; 'any' every change, improvements too.",
        }),
      ),
      enabled: Type.Optional(Type.Boolean({ description: 'false pauses the monitor, true resumes it. Default on creation: true.' })),
      remove: Type.Optional(
        Type.Boolean({ description: 'true deletes the monitor and its run history (the scans stay). Send it with url alone.' }),
      ),
    },
    strict,
  ),
  output: OneOfObjects([Saved, Removed], 'The monitor as saved; with remove: true, {origin, removed}.'),
  run: (input, ctx) =>
    input.remove ? ctx.services.monitors.remove(ctx.principal, input) : ctx.services.monitors.save(ctx.principal, input),
})
