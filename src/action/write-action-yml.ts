/** `npm run action-yml`: writes `action.yml` from the table of settings (`action-yml.ts`). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionYml } from './action-yml.js';

writeFileSync(join(import.meta.dirname, '..', '..', 'action.yml'), actionYml());
