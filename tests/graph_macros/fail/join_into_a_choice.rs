trellis::graph! {
    graph Research {
        node plan;
        node web;
        node papers;
        node summarize;
        node publish;

        START -> plan;
        plan -> web & papers;
        web & papers -> summarize | publish;
        summarize -> END;
        publish -> END;
    }
}

fn main() {}
