trellis::graph! {
    graph Batch {
        node plan;
        node summarize;
        START -> plan;
        plan -> each summarize;
        summarize -> END;
    }
}

fn main() {}
