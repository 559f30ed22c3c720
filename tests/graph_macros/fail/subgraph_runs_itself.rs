trellis::graph! {
    graph Outer {
        node inner { graph Inner; }
        START -> inner -> END;
    }

    graph Inner {
        node again { graph Outer; }
        START -> again -> END;
    }
}

fn main() {}
