// The layers of docs/architecture.md, bottom to top. A file may import from its own folder and from
// lower layers only; type-only imports count too. `npm run lint` runs this (dependency-cruiser).
const LAYERS = [
  ['domain', 'util', 'errors.ts'],
  ['stats'],
  ['telemetry'],
  ['store'],
  ['workloads'],
  ['experiment'],
  ['search'],
  ['trial'],
  ['executors'],
  ['analysis'],
  ['report'],
  ['engine'],
  ['history'],
  ['cli'],
];

// Every folder (and top-level file) of harness/ belongs to a layer: a new one outside the list would
// escape every rule below, so lint fails until it is placed.
const unplaced = require('node:fs')
  .readdirSync(require('node:path').join(__dirname, 'harness'))
  .filter((name) => !LAYERS.flat().includes(name));
if (unplaced.length > 0)
  throw new Error(
    `.dependency-cruiser.cjs: harness/${unplaced.join(', harness/')} belongs to no layer; add it to LAYERS ` +
      '(and to the table in docs/architecture.md)',
  );

const folder = (name) => (name.endsWith('.ts') ? `^harness/${name.replace('.', '[.]')}$` : `^harness/${name}/`);

/** For each layer, a rule that forbids importing any layer above it. */
const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `no-upward-from-${layer[0].replace('.ts', '')}`,
  comment: `${layer.join(', ')} (layer ${i}) may not import from a higher layer: ${LAYERS.slice(i + 1).flat().join(', ')}`,
  severity: 'error',
  from: { path: layer.map(folder).join('|') },
  to: { path: LAYERS.slice(i + 1).flat().map(folder).join('|') },
}));

/** Folders in the same layer (domain, util, errors) stay independent, except that util may use errors. */
const domainAlone = {
  name: 'domain-imports-nothing',
  comment: 'harness/domain/ is the shared vocabulary: it imports nothing of the project',
  severity: 'error',
  from: { path: '^harness/domain/' },
  to: { path: '^harness/', pathNot: '^harness/domain/' },
};

/** util and errors.ts import nothing of the project either, except that util may use errors.ts. */
const utilAlone = {
  name: 'util-and-errors-import-no-project-code',
  comment: 'harness/util/ and harness/errors.ts are layer 0 beside domain/: util may use errors.ts, nothing else',
  severity: 'error',
  from: { path: '^harness/util/|^harness/errors[.]ts$' },
  to: { path: '^harness/', pathNot: '^harness/util/|^harness/errors[.]ts$' },
};

module.exports = {
  forbidden: [
    ...upward,
    domainAlone,
    utilAlone,
    {
      name: 'no-circular',
      comment: 'import cycles make layers meaningless',
      severity: 'error',
      from: { path: '^harness/' },
      to: { circular: true },
    },
    {
      name: 'harness-not-tests',
      comment: 'the harness never imports test code',
      severity: 'error',
      from: { path: '^harness/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
