// The shape of one MCP tool: metadata, TypeBox input and output schemas and a run function on plain values.
import type { Static, TSchema } from '@sinclair/typebox'
import type { Plan, Principal } from '../../../shared/db/accounts.ts'
import type { Services } from '../../services.ts'

export interface ToolContext {
  principal: Principal
  services: Services
  /** Sends an MCP progress notification when the caller asked for them; a no-op otherwise. */
  progress(progress: number, total: number, message: string): Promise<void>
  signal: AbortSignal
  /** Every tool of the server, for tools that describe the others (get_account). */
  tools: readonly Tool[]
}

export interface ToolAnnotations {
  title: string
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export interface Tool<S extends TSchema = TSchema> {
  name: string
  description: string
  /** The least plan that may call the tool. */
  plan: Plan
  annotations: ToolAnnotations
  input: S
  /**
   * What a successful call returns (tools/list's outputSchema; the JSON of structuredContent and content[0].text).
   * Must be a JSON Schema of type object, and accurate: the SDK client rejects a result that does not match.
   * A tool that is not built yet declares what it will return.
   */
  output: TSchema
  /** The tool's `_meta` in tools/list, e.g. the MCP App (ui:// resource) that shows its result. */
  meta?: Record<string, unknown>
  /** Absent while the tool is not built: calls answer not_implemented, never a made-up result. */
  run?(input: Static<S>, ctx: ToolContext): Promise<unknown>
}

export function defineTool<S extends TSchema>(tool: Tool<S>): Tool<S> {
  return tool
}

/** Annotations for a tool that only reads. */
export const readOnly = (title: string, openWorld = false): ToolAnnotations => ({
  title,
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: openWorld,
})

/** Annotations for a tool that creates something (a scan, an audit) but destroys nothing. */
export const creates = (title: string, openWorld = true): ToolAnnotations => ({
  title,
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: openWorld,
})
