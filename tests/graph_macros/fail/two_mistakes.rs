trellis::graph! {
    graph Support {
        node draft { max_visits 0; }
        node review;

        START -> draft;
        draft -> review;
        review -> sned | draft;
    }
}

fn main() {}
