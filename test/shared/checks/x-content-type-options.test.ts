import { describe, expect, test } from 'bun:test'
import { xContentTypeOptions } from '../../../shared/checks/security/x-content-type-options.ts'
import { makeArtifacts, withHeaders } from './artifacts.ts'

const run = (value: string | null) =>
  xContentTypeOptions.run(makeArtifacts({ mainResponse: withHeaders({ 'x-content-type-options': value }) }))

describe('x-content-type-options', () => {
  test('passes nosniff in any case with spaces around it', () => {
    expect(run('  NoSniff ').status).toBe('pass')
  })

  test('fails when missing', () => {
    expect(run(null).status).toBe('fail')
  })

  test('fails any other value', () => {
    const r = run('sniff')
    expect(r.status).toBe('fail')
    expect(r.evidence.header).toBe('sniff')
  })

  test('reads the first value of a repeated header, as the Fetch standard does', () => {
    expect(run('nosniff, nosniff').status).toBe('pass')
  })
})
