//! Lists of successors for every node in two flat arrays (compressed sparse rows): one
//! allocation for the whole graph instead of one per node, which is much of what checking a
//! large graph costs.

/// For node `n`, its items are `items[starts[n]..starts[n + 1]]`.
pub(crate) struct Adjacency<T> {
    starts: Vec<usize>,
    items: Vec<T>,
}

impl<T: Copy + Default> Adjacency<T> {
    /// From `(node, item)` pairs in any order; each node's items keep the order given.
    pub(crate) fn new(nodes: usize, pairs: &[(usize, T)]) -> Self {
        let mut starts = vec![0; nodes + 1];
        for &(node, _) in pairs {
            starts[node + 1] += 1;
        }
        for at in 0..nodes {
            starts[at + 1] += starts[at];
        }
        let mut fill = starts.clone();
        let mut items = vec![T::default(); pairs.len()];
        for &(node, item) in pairs {
            items[fill[node]] = item;
            fill[node] += 1;
        }
        Adjacency { starts, items }
    }

    /// The items of `node`.
    pub(crate) fn of(&self, node: usize) -> &[T] {
        &self.items[self.starts[node]..self.starts[node + 1]]
    }

    /// How many nodes.
    pub(crate) fn nodes(&self) -> usize {
        self.starts.len() - 1
    }

    /// How many items in all.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Every `(node, item)`, node by node.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (usize, T)> + Clone + '_ {
        (0..self.nodes()).flat_map(move |node| self.of(node).iter().map(move |&item| (node, item)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_nodes_items_in_order() {
        let pairs = [(2, 'a'), (0, 'b'), (2, 'c'), (0, 'd')];
        let adjacency = Adjacency::new(3, &pairs);
        assert_eq!(adjacency.of(0), ['b', 'd']);
        assert_eq!(adjacency.of(1), [] as [char; 0]);
        assert_eq!(adjacency.of(2), ['a', 'c']);
        assert_eq!(adjacency.len(), 4);
        assert_eq!(adjacency.pairs().count(), 4);
    }
}
