/**
 * `docker build .` gets only what `.dockerignore` leaves in the build context: every file the
 * Dockerfile copies from the context must be there (Docker's own matching rules), or the image
 * cannot be built. Docker itself is not needed.
 */
import { describe, expect, it } from 'vitest';
import {
  contextCopies,
  contextProblems,
  inContext,
  parseDockerfile,
  readRepoFile,
  repositoryFiles,
} from './dockerfile.js';

describe("the repository's Dockerfile", () => {
  it('copies only files its build context holds', () => {
    const dockerfile = readRepoFile('Dockerfile');
    const copies = contextCopies(parseDockerfile(dockerfile));
    expect(copies.flatMap((c) => c.sources)).toEqual(expect.arrayContaining(['bin', 'src', 'scripts/build-cli.mjs']));
    expect(contextProblems(dockerfile, readRepoFile('.dockerignore'), repositoryFiles())).toEqual([]);
  });

  it('leaves what must never reach an image out of the context: tests, the emulator, git history, local state', () => {
    const problems = contextProblems(
      'FROM scratch\nCOPY test /t/\nCOPY packages /p/\nCOPY .git /g/\nCOPY .cortex-sync /c/\nCOPY node_modules /n/\nCOPY .env /e\n',
      readRepoFile('.dockerignore'),
      [
        'test/a.test.ts',
        'packages/emulator/src/server.ts',
        '.git/HEAD',
        '.cortex-sync/state.json',
        'node_modules/x/index.js',
        '.env',
      ],
    );
    expect(problems.map((p) => p.source)).toEqual(['test', 'packages', '.git', '.cortex-sync', 'node_modules', '.env']);
    // Nor below a folder it copies, nor a tarball `npm pack` left.
    const kept = ['src/.env', 'src/x/.env.local', 'src/.cortex-sync/x', 'cortex-sync-0.1.0.tgz', 'src/cli/main.ts'];
    expect(kept.filter((f) => inContext(readRepoFile('.dockerignore'), f))).toEqual(['src/cli/main.ts']);
  });
});

describe('the check follows Docker', () => {
  const files = ['scripts/build-cli.mjs', 'scripts/demo.mjs', 'src/a.ts', 'src/b/c.ts', 'bin/x.js', 'README.md'];
  const problems = (dockerfile: string, dockerignore: string) =>
    contextProblems(`FROM node:24 AS build\n${dockerfile}`, dockerignore, files).map(
      (p) => `${p.line} ${p.source}: ${p.why}`,
    );

  it('a file under an ignored folder is out of the context', () => {
    expect(problems('COPY scripts/build-cli.mjs ./scripts/', 'scripts\n')).toEqual([
      '2 scripts/build-cli.mjs: excluded by .dockerignore (1 file(s))',
    ]);
  });

  it('`!` re-includes a file below an ignored folder, and a later pattern ignores it again', () => {
    expect(problems('COPY scripts/build-cli.mjs ./scripts/', 'scripts\n!scripts/build-cli.mjs\n')).toEqual([]);
    expect(
      problems('COPY scripts/build-cli.mjs ./scripts/', 'scripts\n!scripts/build-cli.mjs\nscripts/*.mjs\n'),
    ).toEqual(['2 scripts/build-cli.mjs: excluded by .dockerignore (1 file(s))']);
  });

  it('a glob source passes when one file it matches is in the context, fails when none is', () => {
    expect(problems('COPY scripts/*.mjs ./scripts/', 'scripts/demo.mjs\n')).toEqual([]);
    expect(problems('COPY scripts/b*.mjs ./scripts/', 'scripts/build-*\n')).toEqual([
      '2 scripts/b*.mjs: excluded by .dockerignore (1 file(s))',
    ]);
    expect(problems('COPY scripts/z*.mjs ./scripts/', '')).toEqual([
      '2 scripts/z*.mjs: no such file in the repository',
    ]);
  });

  it('a folder passes with part of it ignored (`**`), fails with all of it', () => {
    expect(problems('COPY src ./src', 'src/**/c.ts\n')).toEqual([]);
    expect(problems('COPY src ./src', 'src/*\nsrc/b\n')).toEqual(['2 src: excluded by .dockerignore (2 file(s))']);
  });

  it('`--from=` copies another stage, not the context; flags and the JSON form are read', () => {
    expect(problems('COPY --from=build /app/dist ./dist\nCOPY --from=node:24 /x /y', 'dist\n')).toEqual([]);
    expect(
      problems('COPY --chown=1000:1000 --chmod=755 ["bin", "/app/bin"]\nADD https://example.com/x /x', 'bin\n'),
    ).toEqual(['2 bin: excluded by .dockerignore (1 file(s))']);
  });

  it('continuations and comment lines inside them are joined as Docker does; a variable is refused', () => {
    expect(problems('COPY \\\n# a comment\n  README.md \\\n  /app/', 'README.md\n')).toEqual([
      '2 README.md: excluded by .dockerignore (1 file(s))',
    ]);
    expect(problems('ARG DIR=src\nCOPY ${DIR} /app/', '')).toEqual([
      '3 ${DIR}: names a variable: not checked, so refused',
    ]);
  });
});
