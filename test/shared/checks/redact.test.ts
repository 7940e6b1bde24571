import { describe, expect, test } from 'bun:test'
import { redact, redactAssignment, redactUrlCredentials } from '../../../shared/checks/util/redact.ts'

describe('redaction', () => {
  test('keeps the first 8 and last 4 characters of a long value', () => {
    expect(redact('abcdefghijklmnopqrstuvwxyz')).toBe('abcdefgh…wxyz')
  })

  test('keeps less of a short value and nothing of a very short one', () => {
    expect(redact('abcdefghijklmnop')).toBe('abcd…')
    expect(redact('abc')).toBe('…')
  })

  test('removes credentials from a URL', () => {
    expect(redactUrlCredentials('https://user:pass@github.com/a/b.git')).toBe('https://***@github.com/a/b.git')
    expect(redactUrlCredentials('https://token@github.com/a/b.git')).toBe('https://***@github.com/a/b.git')
    expect(redactUrlCredentials('git@github.com:a/b.git')).toBe('git@github.com:a/b.git')
  })

  test('keeps only the name of an assignment', () => {
    expect(redactAssignment('API_KEY=abc123')).toBe('API_KEY=***')
  })
})
