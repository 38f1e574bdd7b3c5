/** `npm run docs:settings`: writes the README's table of settings from the table (`readme-settings.ts`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withSettingsTable } from './readme-settings.js';

const readme = join(import.meta.dirname, '..', '..', 'README.md');
writeFileSync(readme, withSettingsTable(readFileSync(readme, 'utf8')));
