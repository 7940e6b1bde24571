// `bun run crawler`: a crawler-only process (production). Same boot path with ROLE=crawler.
import { runService } from './main.ts'

await runService({ ROLE: 'crawler' })
