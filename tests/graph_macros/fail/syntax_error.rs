trellis::graph! {
    graph Support {
        node draft;
        START -> draft;
        draft => END;
    }
}

fn main() {}
