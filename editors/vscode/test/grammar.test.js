// The TextMate grammar on every graph the project shows, tokenized by the engine VS Code uses
// (vscode-textmate with Oniguruma): each word lands in the scope a reader expects.
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const oniguruma = require('vscode-oniguruma');
const textmate = require('vscode-textmate');
const { sampleGraphs } = require('../../sample-graphs.js');

const KEYWORDS = [
  'graph', 'state', 'max_steps', 'node', 'retry', 'backoff', 'timeout', 'max_visits',
  'interrupt', 'before', 'after', 'defer', 'on_error', 'kind', 'meta', 'input', 'max_concurrency',
  'writes', 'asks', 'answer', 'each',
];

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: sources => new oniguruma.OnigScanner(sources),
      createOnigString: text => new oniguruma.OnigString(text),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(
      fs.readFileSync(path.join(__dirname, '..', 'syntaxes', 'graph.tmLanguage.json'), 'utf8'),
      'graph.tmLanguage.json',
    ),
  });
  return registry.loadGrammar('source.trellis-graph');
}

/** Each token of `text`: its text and its innermost scope. */
function tokens(grammar, text) {
  let state = textmate.INITIAL;
  const out = [];
  for (const line of text.split('\n')) {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      out.push({
        text: line.slice(token.startIndex, token.endIndex),
        scope: token.scopes[token.scopes.length - 1],
        scopes: token.scopes,
      });
    }
    state = result.ruleStack;
  }
  return out;
}

test('every sample graph: keywords, terminals, names, comments and literals are scoped', async () => {
  const grammar = await loadGrammar();
  const samples = sampleGraphs();
  assert.ok(samples.length >= 10, `${samples.length} samples`);
  for (const { name, text } of samples) {
    for (const token of tokens(grammar, text)) {
      const word = token.text.trim();
      const inComment = token.scopes.some(s => s.startsWith('comment') || s.startsWith('string'));
      if (inComment || word === '') continue;
      if (KEYWORDS.includes(word)) {
        assert.match(token.scope, /^keyword\./, `${name}: \`${word}\` is ${token.scope}`);
      } else if (word === 'START' || word === 'END') {
        assert.match(token.scope, /^constant\.language/, `${name}: ${word}`);
      } else if (/^[0-9]/.test(word)) {
        assert.match(token.scope, /^constant\.numeric/, `${name}: ${word}`);
      }
    }
  }
});

test('declarations, docs, comments and strings', async () => {
  const grammar = await loadGrammar();
  const text = [
    '//! The file.',
    '/// The graph.',
    'graph Support { // trailing',
    '    /* a /* nested */ block */ node draft { interrupt before "Send \\"it\\"?"; }',
    '    START -> draft -> END;',
    '}',
  ].join('\n');
  const scopeOf = word => tokens(grammar, text).find(t => t.text.trim() === word)?.scope;
  assert.strictEqual(scopeOf('//! The file.'), 'comment.line.documentation.trellis-graph');
  assert.strictEqual(scopeOf('/// The graph.'), 'comment.line.documentation.trellis-graph');
  assert.strictEqual(scopeOf('// trailing'), 'comment.line.double-slash.trellis-graph');
  assert.strictEqual(scopeOf('Support'), 'entity.name.type.graph.trellis-graph');
  assert.strictEqual(scopeOf('draft'), 'entity.name.function.node.trellis-graph');
  assert.strictEqual(scopeOf('block'), 'comment.block.trellis-graph', 'nested comments stay comments');
  assert.strictEqual(scopeOf('->'), 'keyword.operator.arrow.trellis-graph');
  assert.strictEqual(scopeOf('\\"'), 'constant.character.escape.trellis-graph');
});
