// The layering of src/ as an allow-list (docs/architecture.md, "Layers"): each folder of src/ may
// import its own files, the folders listed for it, and nothing else; a folder that is not listed
// is an error, so a new folder gets a layer before it gets code. Outside src/kinds/, only the
// kinds' public modules may be imported (never a kind's own files). A few files that compose
// runtimes may import named files of another folder. Relative specifiers are resolved here, so no
// import resolver is needed; bare specifiers (packages, node:) are other rules' business.
// The workspace packages (packages/: the emulator, the benchmark) are not part of the product: no
// file of src/ imports them, and each may import only the folders of src/ listed for it.
import { dirname, relative, resolve, sep } from 'node:path';

const RUNTIME = ['core', 'api', 'source', 'render', 'ownership', 'kinds', 'schemas', 'engine', 'runtime-io'];

/** Folder of src/ → the folders it may import ('*': any). Files directly in src/ (version.ts) are leaves anyone may import. */
export const LAYERS = {
  core: [],
  api: ['core'],
  source: ['core'],
  render: ['core'],
  ownership: ['core', 'api'],
  kinds: ['core', 'api', 'source', 'ownership'],
  schemas: ['core', 'kinds'],
  engine: ['core', 'api', 'source', 'ownership', 'kinds'],
  'runtime-io': ['core', 'source'],
  cli: RUNTIME,
  action: [...RUNTIME, 'drift'],
  watch: [...RUNTIME, 'drift'],
  export: RUNTIME,
  // Drift as a pull request: shared by the watcher and the Action; new manifests are export's.
  drift: [...RUNTIME, 'export'],
  'webhook-route': [...RUNTIME, 'jq'],
  jq: [],
};

/** Workspace package (packages/<name>/) → the folders of src/ it may import ('*': any). */
export const PACKAGES = {
  emulator: ['core', 'jq'],
  bench: '*',
};

/** What other layers may import of a folder, when not every file (`src/kinds/`: the registry and the contracts). */
export const PUBLIC = {
  kinds: ['kinds/registry.ts', 'kinds/types.ts', 'kinds/order.ts', 'kinds/ownership.ts'],
};

/** Files that may import named files of a folder their layer does not list. */
export const EXCEPTIONS = {
  // The CLI defines the other commands (export, watch, webhook-route) when named.
  'cli/main.ts': ['export/command.ts', 'watch/command.ts', 'webhook-route/command.ts'],
};

const toPosix = (p) => p.split(sep).join('/');

/** `src/`-relative path of what a relative specifier names (`.js` written for a `.ts` file). */
const targetOf = (file, specifier, srcRoot) => {
  const absolute = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
  return toPosix(relative(srcRoot, absolute));
};

/** The import forms a check sees: `import`, `import type`, `export … from`, `import()`. */
const visitors = (check) => {
  const source = (node) => check(node.source, node.source?.value);
  return {
    ImportDeclaration: source,
    ExportNamedDeclaration: (node) => node.source && source(node),
    ExportAllDeclaration: source,
    ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
  };
};

/** A file of packages/<name>/: what it imports of src/ is in PACKAGES; other files are not checked. */
const packageRule = (context, srcRoot) => {
  const file = context.filename;
  const inPackages = toPosix(relative(resolve(context.cwd, 'packages'), file));
  if (inPackages.startsWith('..')) return {};
  const from = inPackages.slice(0, inPackages.indexOf('/'));
  const allowed = PACKAGES[from];
  const check = (node, specifier) => {
    if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
    const target = targetOf(file, specifier, srcRoot);
    if (target.startsWith('..') || allowed === '*') return;
    const folder = target.includes('/') ? target.slice(0, target.indexOf('/')) : '';
    if (allowed !== undefined && (folder === '' || allowed.includes(folder))) return;
    const allowedText = allowed?.length ? allowed.map((f) => `${f}/`).join(', ') : 'nothing (no entry)';
    context.report({ node, messageId: 'package', data: { from, target, allowed: allowedText } });
  };
  return visitors(check);
};

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Each folder of src/ imports only the folders its layer allows (an allow-list).' },
    schema: [],
    messages: {
      layer: '{{from}}/ may not import {{target}}: {{from}}/ uses {{allowed}} (eslint.layers.js, docs/architecture.md)',
      unlisted: 'src/{{from}}/ has no layer: add it to LAYERS in eslint.layers.js (and to docs/architecture.md)',
      product:
        'src/ may not import {{target}}: the workspace packages (packages/) are not part of the product; move what both need into src/',
      package:
        'packages/{{from}}/ may not import src/{{target}}: of src/ it uses {{allowed}} (PACKAGES in eslint.layers.js)',
      private: '{{target}} is internal to src/{{folder}}/: outside it, import only {{public}}',
    },
  },
  create(context) {
    const srcRoot = resolve(context.cwd, 'src');
    const file = context.filename;
    const own = toPosix(relative(srcRoot, file));
    if (own.startsWith('..')) return packageRule(context, srcRoot);
    const from = own.includes('/') ? own.slice(0, own.indexOf('/')) : '';
    if (from === '') return {};
    const allowed = LAYERS[from];
    if (allowed === undefined) {
      return { Program: (node) => context.report({ node, messageId: 'unlisted', data: { from } }) };
    }
    const check = (node, specifier) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = targetOf(file, specifier, srcRoot);
      if (target.startsWith('../packages/')) {
        context.report({ node, messageId: 'product', data: { target: target.slice(3) } });
        return;
      }
      if (target.startsWith('..')) return;
      const folder = target.includes('/') ? target.slice(0, target.indexOf('/')) : '';
      if (folder === '' || folder === from || allowed === '*') return;
      if ((EXCEPTIONS[own] ?? []).includes(target)) return;
      if (!allowed.includes(folder)) {
        const allowedText = allowed.length > 0 ? allowed.map((f) => `${f}/`).join(', ') : 'nothing outside itself';
        context.report({ node, messageId: 'layer', data: { from, target, allowed: allowedText } });
        return;
      }
      const open = PUBLIC[folder];
      if (open && !open.includes(target)) {
        context.report({ node, messageId: 'private', data: { target, folder, public: open.join(', ') } });
      }
    };
    return visitors(check);
  },
};

export const layersPlugin = { rules: { 'allowed-imports': rule } };
