// The changelog of a release: the commits since the previous version tag, one line each, as
// Markdown. Refuses a tag that is not `v` + package.json's version (the npm package, the image
// and the Action's tag would disagree otherwise).
//
// Usage: node scripts/release-notes.mjs <tag>     (in the release workflow: the pushed tag)
//        node scripts/release-notes.mjs --head    (CI: the notes HEAD would get as v<version>)
// Prints the notes on stdout; exits 1 with the reason on stderr.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const cwd = process.cwd();
const git = (...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const fail = (message) => {
  console.error(`release-notes: ${message}`);
  process.exit(1);
};

const { version } = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'));
const arg = process.argv[2];
if (!arg) fail('which tag? Usage: release-notes.mjs <tag> | --head');
const tag = arg === '--head' ? `v${version}` : arg;
if (!/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(tag)) fail(`${tag} is not a version tag (v1.2.3 or v1.2.3-rc.1)`);
if (tag !== `v${version}`) fail(`the tag ${tag} is not the package's version (package.json says ${version})`);

const ref = arg === '--head' ? 'HEAD' : tag;
try {
  git('rev-parse', '--verify', `${ref}^{commit}`);
} catch {
  fail(`no such tag: ${tag}`);
}
// The previous release: the nearest version tag reachable from the commit before this one.
let previous;
try {
  previous = git('describe', '--tags', '--abbrev=0', '--match', 'v[0-9]*.[0-9]*.[0-9]*', `${ref}^`);
} catch {
  previous = undefined; // the first release
}
const range = previous ? `${previous}..${ref}` : ref;
const lines = git('log', '--no-merges', '--format=%h%x09%s', range)
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => {
    const [hash, ...subject] = l.split('\t');
    // A commit subject is text anyone with push access wrote: keep Markdown from reading it as markup.
    const text = subject
      .join('\t')
      .replace(/([\\`*_[\]<>|~])/g, '\\$1')
      .replace(/@/g, '@\u200b');
    return `- ${text} (${hash})`;
  });
const date = git('log', '-1', '--format=%cs', ref);
console.log(`## ${tag} (${date})\n`);
console.log(previous ? `Changes since ${previous}:\n` : 'The first release.\n');
console.log(lines.length > 0 ? lines.join('\n') : '- No changes.');
