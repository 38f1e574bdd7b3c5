/** `npm run docs:kinds`: writes the README's layout table from the registry (`readme-kinds.ts`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withKindsTable } from './readme-kinds.js';

const readme = join(import.meta.dirname, '..', '..', 'README.md');
writeFileSync(readme, withKindsTable(readFileSync(readme, 'utf8')));
