trellis::graph! {
    graph Support {
        node draft;
        node review;

        START -> draft;
        draft -> reveiw;
        review -> END;
    }
}

fn main() {}
