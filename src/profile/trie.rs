//! A stack trie: every sampled stack is a path from the root, each node a
//! frame with the time sampled with it on top. Stacks that share callers
//! share nodes, so memory grows with the number of distinct stacks, not
//! with the number of samples; a cap on nodes bounds it (time past the cap
//! stays with the deepest frame already known, and is counted).

use foldhash::{HashMap, HashMapExt};

use super::Frame;

#[derive(Debug, Clone)]
struct Node {
    parent: u32,
    frame: Frame,
    self_ns: u64,
}

/// Sampled stacks, aggregated in place.
#[derive(Debug, Clone)]
pub struct Trie {
    nodes: Vec<Node>,
    index: HashMap<(u32, Frame), u32>,
    cap: usize,
    /// Time that landed on a shorter stack because the cap was reached.
    pub capped_ns: u64,
    /// Time sampled in all.
    pub total_ns: u64,
    pub samples: u64,
}

impl Trie {
    /// A trie of at most `cap` frames (nodes).
    pub fn new(cap: usize) -> Trie {
        Trie {
            nodes: vec![Node {
                parent: 0,
                frame: Frame::ROOT,
                self_ns: 0,
            }],
            index: HashMap::new(),
            cap: cap.max(1),
            capped_ns: 0,
            total_ns: 0,
            samples: 0,
        }
    }

    /// Add `ns` to the stack `root_first` (outermost caller first).
    pub fn add(&mut self, root_first: impl IntoIterator<Item = Frame>, ns: u64) {
        self.add_many(root_first, ns, 1);
    }

    /// Add `n` samples of `ns` in all to the stack `root_first`.
    pub fn add_many(&mut self, root_first: impl IntoIterator<Item = Frame>, ns: u64, n: u64) {
        let mut at = 0u32;
        for f in root_first {
            at = match self.index.get(&(at, f)) {
                Some(&n) => n,
                None if self.nodes.len() < self.cap => {
                    let n = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        parent: at,
                        frame: f,
                        self_ns: 0,
                    });
                    self.index.insert((at, f), n);
                    n
                }
                None => {
                    self.capped_ns += ns;
                    break;
                }
            };
        }
        self.nodes[at as usize].self_ns += ns;
        self.total_ns += ns;
        self.samples += n;
    }

    /// Whether the cap was reached.
    pub fn full(&self) -> bool {
        self.nodes.len() >= self.cap
    }

    /// Each stack with time on top of it: (frames outermost first, ns).
    pub fn stacks(&self) -> Vec<(Vec<Frame>, u64)> {
        let mut out = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.self_ns == 0 {
                continue;
            }
            let mut frames = Vec::new();
            let mut at = i as u32;
            while at != 0 {
                let node = &self.nodes[at as usize];
                frames.push(node.frame);
                at = node.parent;
            }
            frames.reverse();
            out.push((frames, n.self_ns));
        }
        out
    }

    /// Every distinct frame in the trie.
    pub fn frames(&self) -> impl Iterator<Item = Frame> + '_ {
        self.nodes.iter().skip(1).map(|n| n.frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(o: u64) -> Frame {
        Frame {
            module: 1,
            offset: o,
        }
    }

    #[test]
    fn shared_callers_share_nodes_and_self_time_stays_on_top() {
        let mut t = Trie::new(100);
        t.add([f(1), f(2), f(3)], 10);
        t.add([f(1), f(2), f(3)], 5);
        t.add([f(1), f(2)], 7);
        t.add([f(1), f(4)], 1);
        assert_eq!(t.frames().count(), 4);
        let mut s = t.stacks();
        s.sort();
        assert_eq!(
            s,
            vec![
                (vec![f(1), f(2)], 7),
                (vec![f(1), f(2), f(3)], 15),
                (vec![f(1), f(4)], 1)
            ]
        );
        assert_eq!(t.total_ns, 23);
        assert_eq!(t.samples, 4);
    }

    #[test]
    fn the_cap_bounds_nodes_and_counts_what_it_cut() {
        let mut t = Trie::new(3);
        t.add([f(1), f(2)], 1);
        t.add([f(1), f(3), f(4)], 2);
        assert!(t.full());
        assert_eq!(t.frames().count(), 2);
        assert_eq!(t.capped_ns, 2);
        // The cut stack's time stays with its deepest known caller.
        let s = t.stacks();
        assert!(s.contains(&(vec![f(1)], 2)));
        assert_eq!(t.total_ns, 3);
    }
}
