trellis::graph! {
    graph Research {
        node search;
        START -> search -> END;
    }

    graph Ticket {
        node research { graph Reserch; }
        START -> research -> END;
    }
}

fn main() {}
