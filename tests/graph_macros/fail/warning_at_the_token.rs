// A warning of the language is a warning of `cargo check`, on the token it is about, with its
// code and help (denied here, so that this test can show it).
#![deny(deprecated)]

trellis::graph! {
    graph Support {
        node classify;
        node archive;
        START -> classify;
        classify -> END;
        archive -> END;
    }
}

fn main() {}
