; Highlighting for `.graph` files (Helix, Neovim, Zed).

[
  "graph"
  "state"
  "max_steps"
  "node"
  "retry"
  "retry_on"
  "backoff"
  "max"
  "jitter"
  "timeout"
  "max_visits"
  "interrupt"
  "before"
  "after"
  "defer"
  "on_error"
  "kind"
  "meta"
  "input"
  "max_concurrency"
  "writes"
  "asks"
  "answer"
  "each"
] @keyword

[(start) (end)] @constant.builtin
(boolean) @constant.builtin

(graph name: (identifier) @type)
(node_declaration name: (identifier) @function)
(edge from: (identifier) @function.call)
(targets (identifier) @function.call)
(on_error (identifier) @function.call)
(kind (identifier) @constant)
(meta key: (identifier) @property)
(rust_path (identifier) @type)

(number) @number
(string) @string
(comment) @comment
(doc_comment) @comment.documentation

["->" "|" "&" "="] @operator
["{" "}" "(" ")" "<" ">"] @punctuation.bracket
[";" "::" ","] @punctuation.delimiter
