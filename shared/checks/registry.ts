// Every check, in report order. Adding a check: import it here and give it a row in shared/report/scoring.ts.

import { accessibility } from './accessibility/accessibility.ts'
import { apiDataExposure } from './exposure/api-data-exposure.ts'
import { debugErrorPage } from './exposure/debug-error-page.ts'
import { exposedApiDocs } from './exposure/exposed-api-docs.ts'
import { passwordForm } from './security/password-form.ts'
import { directoryListing } from './exposure/directory-listing.ts'
import { exposedAgentInstructions } from './exposure/exposed-agent-instructions.ts'
import { exposedBackupFiles } from './exposure/exposed-backup-files.ts'
import { exposedFrameworkConfig } from './exposure/exposed-framework-config.ts'
import { exposedInfraFiles } from './exposure/exposed-infra-files.ts'
import { exposedLogFiles } from './exposure/exposed-log-files.ts'
import { exposedMetadataFiles } from './exposure/exposed-metadata-files.ts'
import { serverInfoPage } from './exposure/server-info-page.ts'
import { webAppExposure } from './exposure/web-app-exposure.ts'
import { pageSecrets } from './secrets/page-secrets.ts'
import { endOfLifeSoftware } from './security/end-of-life-software.ts'
import { exposedPackageManifest } from './exposure/exposed-package-manifest.ts'
import { exposedSourceMaps } from './exposure/exposed-source-maps.ts'
import { tlsCertificate } from './https/tls-certificate.ts'
import { tlsProtocol } from './https/tls-protocol.ts'
import { perfCaching } from './performance/perf-caching.ts'
import { perfCompression } from './performance/perf-compression.ts'
import { perfPageWeight } from './performance/perf-page-weight.ts'
import { perfRequestCount } from './performance/perf-request-count.ts'
import { perfTiming } from './performance/perf-timing.ts'
import { thirdPartyCookies } from './privacy/third-party-cookies.ts'
import { thirdPartyRequests } from './privacy/third-party-requests.ts'
import { corsCredentialedReflection } from './security/cors-credentialed-reflection.ts'
import { corsWildcardApi } from './security/cors-wildcard-api.ts'
import { crossOriginIsolation } from './security/cross-origin-isolation.ts'
import { permissionsPolicy } from './security/permissions-policy.ts'
import { subresourceIntegrity } from './security/subresource-integrity.ts'
import { vulnerableJsLibrary } from './security/vulnerable-js-library.ts'
import { seoCanonical } from './seo/seo-canonical.ts'
import { seoIndexable } from './seo/seo-indexable.ts'
import { seoLang } from './seo/seo-lang.ts'
import { seoMetaDescription } from './seo/seo-meta-description.ts'
import { seoTitle } from './seo/seo-title.ts'
import { seoViewport } from './seo/seo-viewport.ts'
import { cookieHttpOnly } from './cookies/cookie-httponly.ts'
import { cookieSameSite } from './cookies/cookie-samesite.ts'
import { cookieSecure } from './cookies/cookie-secure.ts'
import { exposedEnvFile } from './exposure/exposed-env-file.ts'
import { exposedGitConfig } from './exposure/exposed-git-config.ts'
import { hsts } from './https/hsts.ts'
import { httpsRedirect } from './https/https-redirect.ts'
import { mixedContent } from './https/mixed-content.ts'
import { jsSecrets } from './secrets/js-secrets.ts'
import { csp } from './security/csp.ts'
import { frameProtection } from './security/frame-protection.ts'
import { referrerPolicy } from './security/referrer-policy.ts'
import { versionDisclosure } from './security/version-disclosure.ts'
import { xContentTypeOptions } from './security/x-content-type-options.ts'
import type { Check } from './types.ts'

/** Bumped whenever a check's judgement changes; a check whose meaning changes gets a new id instead. */
export const CHECKS_VERSION = '2026.11.9'

export const CHECKS = [
  httpsRedirect,
  tlsCertificate,
  tlsProtocol,
  hsts,
  csp,
  frameProtection,
  xContentTypeOptions,
  referrerPolicy,
  permissionsPolicy,
  crossOriginIsolation,
  corsCredentialedReflection,
  corsWildcardApi,
  subresourceIntegrity,
  passwordForm,
  cookieSecure,
  cookieHttpOnly,
  cookieSameSite,
  mixedContent,
  versionDisclosure,
  exposedEnvFile,
  exposedGitConfig,
  exposedSourceMaps,
  exposedAgentInstructions,
  exposedPackageManifest,
  exposedFrameworkConfig,
  exposedBackupFiles,
  exposedMetadataFiles,
  exposedInfraFiles,
  exposedLogFiles,
  serverInfoPage,
  webAppExposure,
  directoryListing,
  debugErrorPage,
  apiDataExposure,
  exposedApiDocs,
  jsSecrets,
  pageSecrets,
  vulnerableJsLibrary,
  endOfLifeSoftware,
  seoTitle,
  seoMetaDescription,
  seoLang,
  seoViewport,
  seoIndexable,
  seoCanonical,
  perfPageWeight,
  perfRequestCount,
  perfCompression,
  perfCaching,
  perfTiming,
  accessibility,
  thirdPartyRequests,
  thirdPartyCookies,
] as const

/** The id of a registered check: a literal type, so a table keyed by it (the scoring table) must name every check. */
export type CheckId = (typeof CHECKS)[number]['id']

/** A registered check, its run widened to take any artifacts (the runner passes only what it declares). */
export type AnyCheck = Check

const BY_ID: ReadonlyMap<string, AnyCheck> = new Map(CHECKS.map((c): [string, AnyCheck] => [c.id, c]))

export function getCheck(id: string): AnyCheck | undefined {
  return BY_ID.get(id)
}
