trellis::graph! {
    graph Support {
        node draft { retry backoff 200ms; }
        START -> draft;
        draft -> END;
    }
}

fn main() {}
