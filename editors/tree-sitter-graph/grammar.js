// The `.graph` language of Trellis, for editors that highlight with tree-sitter (Helix, Neovim,
// Zed). It follows dsl/src/grammar.pest (the language's one definition) and, like it, reads a
// little wider than the language where the checker gives the better error: any word may name a
// node, any suffix may follow a number, `a -> b | c -> d` parses (the checker refuses it).
// What it does not know: nested block comments (a `/*` inside a block comment), which only the
// checker reads; no example or docs graph uses one.
module.exports = grammar({
  name: 'trellis_graph',

  extras: $ => [/\s|\uFEFF/, $.comment, $.doc_comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => repeat($.graph),

    graph: $ => seq('graph', field('name', $.identifier), '{', repeat($._item), '}'),

    _item: $ => choice(
      $.node_declaration,
      $.edge,
      $.state_declaration,
      $.max_steps_declaration,
    ),

    state_declaration: $ => seq('state', $.rust_path, ';'),
    max_steps_declaration: $ => seq('max_steps', $.number, ';'),

    node_declaration: $ => seq(
      'node',
      field('name', $.identifier),
      choice(';', $.attributes),
    ),
    attributes: $ => seq('{', repeat($._attribute), '}'),
    _attribute: $ => choice(
      $.retry,
      $.retry_on,
      $.timeout,
      $.max_visits,
      $.interrupt,
      $.defer,
      $.on_error,
      $.kind,
      $.meta,
      $.input,
      $.max_concurrency,
      $.writes,
      $.asks,
      $.subgraph,
    ),
    // `graph Research;`: the node runs another graph (this file's, or a path to another's).
    subgraph: $ => seq('graph', $.rust_path, ';'),
    input: $ => seq('input', $.rust_path, ';'),
    max_concurrency: $ => seq('max_concurrency', $.number, ';'),
    // `writes notes, sources;`: the state fields the node may write.
    writes: $ => seq('writes', $.identifier, repeat(seq(',', $.identifier)), ';'),
    retry: $ => seq(
      'retry',
      $.number,
      optional(seq('backoff', $.number, optional(seq('max', $.number)), optional('jitter'))),
      ';',
    ),
    retry_on: $ => seq('retry_on', $.identifier, repeat(seq(',', $.identifier)), ';'),
    timeout: $ => seq('timeout', $.number, ';'),
    max_visits: $ => seq('max_visits', $.number, ';'),
    // `interrupt before "Send it?" answer Decision;`: the answer's type, if declared.
    interrupt: $ => seq(
      'interrupt',
      choice('before', 'after'),
      optional($.string),
      optional(seq('answer', $.rust_path)),
      ';',
    ),
    // `asks Question -> Answer;`: what the node asks from inside, and its answer's type.
    asks: $ => seq('asks', $.rust_path, '->', $.rust_path, ';'),
    defer: $ => seq('defer', ';'),
    on_error: $ => seq('on_error', $._endpoint, ';'),
    kind: $ => seq(
      'kind',
      choice($.string, seq($.identifier, optional(seq('(', $.identifier, ')')))),
      ';',
    ),
    meta: $ => seq(
      'meta',
      field('key', $.identifier),
      '=',
      choice($.string, $.number, $.boolean),
      ';',
    ),

    // `a -> b -> c | d;`: hops, the last of which may branch. `a & b -> c;`: a waiting join.
    edge: $ => seq(
      field('from', $._endpoint),
      repeat(seq('&', field('from', $._endpoint))),
      repeat1(seq('->', $.targets)),
      ';',
    ),
    targets: $ => choice(
      // `each a | b`: a send.
      seq('each', $._endpoint, repeat(seq('|', $._endpoint))),
      seq(
        $._endpoint,
        optional(choice(repeat1(seq('|', $._endpoint)), repeat1(seq('&', $._endpoint)))),
      ),
    ),
    _endpoint: $ => choice($.start, $.end, $.identifier),
    start: _ => 'START',
    end: _ => 'END',

    rust_path: $ => seq(
      optional('::'),
      $.identifier,
      repeat(seq('::', $.identifier)),
      optional($.generic_arguments),
    ),
    generic_arguments: $ => seq('<', $.rust_path, repeat(seq(',', $.rust_path)), '>'),

    boolean: _ => choice('true', 'false'),
    number: _ => /[0-9][A-Za-z0-9_]*/,
    string: _ => /"([^"\\]|\\.)*"/,
    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    // `///` documents the next graph or node, `//!` the file; `////` is a plain comment (the
    // longer match). A doc comment is also a comment of the same length: being defined first,
    // it wins that tie.
    doc_comment: _ => token(choice(/\/\/\/([^\/\n][^\n]*)?/, /\/\/![^\n]*/)),
    comment: _ => token(choice(
      seq('//', /[^\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});
