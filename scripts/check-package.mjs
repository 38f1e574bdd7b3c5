// Checks what `npm publish` would upload, without publishing: the file list of `npm pack` (run
// with --ignore-scripts on the build already made, so `dist/` is what `npm ci` or `npm run build`
// wrote). The package is the command: `bin/`, `dist/` (the compiled sources and the CLI bundle),
// `schemas/`, package.json, the README and the LICENSE (the MIT terms travel with the code); not the
// emulator nor the benchmark (workspace packages of the repository, `packages/`), no tests, no local
// state (`.cortex-sync/`), no secrets
// (`.env`, keys), no packed tarballs. The Action is not in the package: it runs from the git tag,
// so its bundle must be committed at the path `action.yml` names.
//
// Usage: node scripts/check-package.mjs [package folder] (default: this repository). Exits 1 with
// one line per problem.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? join(import.meta.dirname, '..'));
const [pack] = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }),
);
const files = pack.files.map((f) => f.path);
const problems = [];

/** What the package may hold, and nothing else. */
const allowed = [
  /^package\.json$/,
  /^README\.md$/i,
  /^LICEN[SC]E(\.md|\.txt)?$/i,
  /^bin\/cortex-sync\.js$/,
  /^dist\/[\w./-]+\.(js|js\.map|json)$/,
  /^schemas\/[\w-]+\.schema\.json$/,
];
/** Never, wherever it is (a later `files` entry or a stray build output must not let it through). */
const forbidden = [
  [/(^|\/)test(s)?\//, 'a test folder'],
  [/\.(test|spec)\.[cm]?[jt]s(\.map)?$/, 'a test file'],
  [/(^|\/)\.cortex-sync(\/|$)/, 'local state (.cortex-sync/)'],
  [/(^|\/)\.env(\.|$)/, 'an environment file'],
  [/(^|\/)\.npmrc$/, 'an npm configuration (may hold a token)'],
  [/\.(pem|key|p12|pfx)$|(^|\/)id_(rsa|ed25519|ecdsa)/, 'a key file'],
  [/\.tgz$/, 'a packed tarball'],
  [
    /^(dist\/(emulator|bench)|packages)\//,
    'the emulator or the benchmark: workspace packages, not the command (an old build? rm -rf dist && npm run build)',
  ],
];
for (const file of files) {
  for (const [pattern, what] of forbidden) if (pattern.test(file)) problems.push(`${file}: ${what}`);
  if (!allowed.some((pattern) => pattern.test(file))) problems.push(`${file}: not part of the command`);
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const [name, path] of Object.entries(pkg.bin ?? {}))
  if (!files.includes(path.replace(/^\.\//, ''))) problems.push(`${path}: the "${name}" command is missing`);
if (!files.some((f) => /^LICEN[SC]E(\.md|\.txt)?$/i.test(f)))
  problems.push('LICENSE: missing (the terms package.json names)');
for (const needed of ['dist/bundle/cli.js', 'dist/watch/healthcheck-main.js'])
  if (!files.includes(needed)) problems.push(`${needed}: missing (was the package built? npm run build)`);
if (!files.some((f) => f.startsWith('schemas/'))) problems.push('schemas/: missing (the editors’ JSON Schemas)');

// The Action runs from the repository at the tag: `runs.main` must be a committed file.
const actionFile = join(root, 'action.yml');
if (existsSync(actionFile)) {
  const main = /^\s+main:\s*(\S+)\s*$/m.exec(readFileSync(actionFile, 'utf8'))?.[1];
  const tracked = main ? execFileSync('git', ['ls-files', '--', main], { cwd: root, encoding: 'utf8' }).trim() : '';
  if (!main || tracked !== main) problems.push(`action.yml runs.main ${main ?? '(none)'}: not a committed file`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`${problems.length} problem(s) in the package ${pack.name}@${pack.version} (${files.length} files).`);
  process.exit(1);
}
console.log(
  `${pack.name}@${pack.version}: ${files.length} files, ${(pack.size / 1024).toFixed(0)} KiB packed; bin, dist, schemas only.`,
);
