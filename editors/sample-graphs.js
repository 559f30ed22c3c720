// Every `.graph` the project shows people: the example and blueprint files, and each ```graph
// block of the README and docs/ (not the ```graph,E0202 blocks, which are wrong on purpose).
// Both editor grammars are tested on all of them. `node sample-graphs.js DIR` writes them there.
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const SKIP = new Set(['target', 'node_modules', '.git', 'fixtures']);

function graphFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : graphFiles(full);
    return entry.name.endsWith('.graph') ? [full] : [];
  });
}

function docBlocks(file) {
  const blocks = [];
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```graph') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    blocks.push({
      name: `${path.relative(ROOT, file)}:${start + 1}`,
      text: lines.slice(start, end).join('\n') + '\n',
    });
    i = end;
  }
  return blocks;
}

function sampleGraphs() {
  const files = ['examples', 'agent', 'tests'].flatMap(dir => graphFiles(path.join(ROOT, dir)))
    // A file that is broken on purpose (the CLI's error-path fixture).
    .filter(file => !file.endsWith(path.join('tests', 'fixtures', 'broken.graph')))
    .map(file => ({ name: path.relative(ROOT, file), text: fs.readFileSync(file, 'utf8') }));
  const docs = fs.readdirSync(path.join(ROOT, 'docs'))
    .filter(name => name.endsWith('.md'))
    .map(name => path.join(ROOT, 'docs', name))
    .concat([path.join(ROOT, 'README.md')])
    .flatMap(docBlocks);
  return files.concat(docs);
}

module.exports = { sampleGraphs };

if (require.main === module) {
  const out = process.argv[2];
  fs.mkdirSync(out, { recursive: true });
  for (const [i, graph] of sampleGraphs().entries()) {
    const name = `${String(i).padStart(3, '0')}-${graph.name.replace(/[^A-Za-z0-9.]+/g, '_')}.graph`;
    fs.writeFileSync(path.join(out, name), graph.text);
  }
}
