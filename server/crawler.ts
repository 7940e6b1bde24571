// `bun run crawler`: a crawler-only process (production). Same boot path with ROLE=crawler.
process.env.ROLE = 'crawler'
await import('./main.ts')
export {}
