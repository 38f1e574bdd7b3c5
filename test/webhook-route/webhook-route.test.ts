/**
 * For the people who write webhook payload mappings: `validate` checks
 * `x-service-custom-integration-mappings` across the repository, and `webhook-route` says offline
 * which entity a payload would reach, with the same jq and rules as the emulator's webhook.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, removeDir, tempDir, writeFiles } from '../cli/run.js';

const entity = (tag: string, mappings?: string[]) =>
  [
    'openapi: 3.0.1',
    'info:',
    `  title: ${tag}`,
    `  x-cortex-tag: ${tag}`,
    ...(mappings ? ['  x-service-custom-integration-mappings:', ...mappings.map((m) => `    - ${m}`)] : []),
    '',
  ].join('\n');

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

describe('validate: webhook mappings across the repository', () => {
  it('a value two entities register is an error naming both files; a value that is another tag is a warning', async () => {
    await writeFiles(dir, {
      '.cortex/catalog/brain.yaml': entity('brain', ['left-lobe', 'cortex-x']),
      '.cortex/catalog/mind.yaml': entity('mind', ['cortex-x']),
      '.cortex/catalog/left-lobe.yaml': entity('left-lobe'),
    });
    const r = await cli(['validate'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /\.cortex\/catalog\/mind\.yaml:6:\d+: error: `cortex-x` is registered as a webhook mapping by entity `brain` \(\.cortex\/catalog\/brain\.yaml:7\) and entity `mind` \(\.cortex\/catalog\/mind\.yaml:6\)/,
    );
    expect(r.stderr).toMatch(
      /\.cortex\/catalog\/brain\.yaml:6:\d+: warning: `left-lobe` is the tag of entity `left-lobe` \(\.cortex\/catalog\/left-lobe\.yaml:4\)/,
    );
  });

  it('distinct mappings are fine, and a wrong shape is a schema error', async () => {
    await writeFiles(dir, {
      '.cortex/catalog/a.yaml': entity('a', ['alpha']),
      '.cortex/catalog/b.yaml': entity('b', ['beta', '12345']),
    });
    expect(await cli(['validate'], { cwd: dir })).toMatchObject({ code: 0 });
    await writeFiles(dir, {
      '.cortex/catalog/c.yaml': [
        'openapi: 3.0.1',
        'info:',
        '  title: c',
        '  x-cortex-tag: c',
        '  x-service-custom-integration-mappings: {a: b}',
        '',
      ].join('\n'),
    });
    const r = await cli(['validate'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\.cortex\/catalog\/c\.yaml:5:\d+: error: info\.x-service-custom-integration-mappings/);
  });
});

describe('webhook-route', () => {
  const setup = async (payload: unknown) => {
    await writeFiles(dir, {
      '.cortex/catalog/left-brain.yaml': entity('left-brain'),
      '.cortex/catalog/brain.yaml': entity('brain', ['right-brain']),
      'payload.json': typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  };
  const route = (jq: string, extra: string[] = []) =>
    cli(['webhook-route', '--jq', jq, '--payload', 'payload.json', ...extra], { cwd: dir });

  it('names the entity whose tag the Entity tag JQ gives, with its file', async () => {
    await setup({ data: { codeTag: 'left-brain' } });
    const r = await route('.data.codeTag');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(
      'left-brain (.cortex/catalog/left-brain.yaml:4): the Entity tag JQ gives `left-brain`, its tag\n',
    );
  });

  it('names the entity that maps the value when no entity has it as a tag', async () => {
    await setup({ events: [{ kind: 'build' }, { kind: 'deploy', component: 'right-brain' }] });
    const r = await route('.events[] | select(.kind == "deploy") | .component');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('brain (.cortex/catalog/brain.yaml:4): the Entity tag JQ gives `right-brain`');
    expect(r.stdout).toContain('lists in x-service-custom-integration-mappings');
  });

  it('says why no entity receives it, and exits 1', async () => {
    await setup({ data: { codeTag: 'nobody', list: ['a', 'b'] } });
    const none = await route('.data.codeTag');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no entity receives this payload: no entity has the tag `nobody`');
    expect(none.stderr).toContain('the API answers 400 and stores nothing');
    expect((await route('.data.list[]')).stderr).toContain('gave 2 values');
    expect((await route('.data.missing')).stderr).toContain('gave null');
    expect((await route('.data.list | .x')).stderr).toContain('the Entity tag JQ failed on it');
    const bad = await route('.data |||');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error: --jq is not a jq program');
  });

  it('refuses a payload that is not JSON, is missing, or is over 2 MB, naming the file', async () => {
    await setup('{"data": ');
    expect((await route('.data')).stderr).toMatch(/--payload payload\.json is not one JSON value/);
    expect((await cli(['webhook-route', '--jq', '.', '--payload', 'nope.json'], { cwd: dir })).stderr).toContain(
      '--payload nope.json: no such file',
    );
    await writeFiles(dir, { 'payload.json': JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }) });
    const big = await route('.pad');
    expect(big.code).toBe(1);
    expect(big.stderr).toContain('the API refuses bodies over 2097152 (2 MB)');
  });

  it('names the file and the line and column of a payload that is not JSON, never its content', async () => {
    await setup('{"token": "hunter2-secret-value",\n  "next": secret-token-xyz}');
    const r = await route('.token');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--payload payload.json is not one JSON value: line 2, column 11');
    expect(r.stderr).not.toMatch(/hunter2|secret|token|xyz/);
    await setup('secret-bearer-abc');
    const first = await route('.');
    expect(first.stderr).toContain('--payload payload.json is not one JSON value: line 1, column 1');
    expect(first.stderr).not.toMatch(/secret|bearer|abc/);
    await setup('{"a": 1} {"b": "secret-two"}');
    const two = await route('.');
    expect(two.stderr).toContain('--payload payload.json is not one JSON value: line 1, column 10');
    expect(two.stderr).not.toMatch(/secret/);
    await setup('[[['.repeat(20_000));
    const deep = await route('.');
    expect(deep.stderr).toMatch(/--payload payload\.json is not one JSON value: line 1, column 60001/);
  });

  it('does not answer while the manifests have errors, and prints tags safely', async () => {
    await setup({ t: 'x' });
    await writeFiles(dir, { '.cortex/catalog/broken.yaml': 'openapi: 3.0.1\ninfo: {title: b}\n' });
    const r = await route('.t');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifests have errors');
    await removeDir(`${dir}/.cortex/catalog/broken.yaml`);
    await writeFiles(dir, { 'payload.json': JSON.stringify({ t: 'evil\u001b[2J\ntag' }) });
    const evil = await route('.t');
    expect(evil.code).toBe(1);
    expect(evil.stderr).toContain('no entity has the tag `evil\\x1b[2J\\ntag`');
    expect(evil.stdout + evil.stderr).not.toContain('\u001b');
  });
});
