// Argument pieces shared by several tools.
import { Type } from '@sinclair/typebox'

export const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Absolute http or https URL of the app, e.g. https://www.example.com/',
})

export const Id = (what: string, prefix: string) =>
  Type.String({ minLength: 4, maxLength: 64, pattern: `^${prefix}_[0-9A-Za-z]+$`, description: `The ${what} id (${prefix}_...).` })

export const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page.' }))
export const Cursor = Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor from the previous page.' }))

export const strict = { additionalProperties: false } as const
