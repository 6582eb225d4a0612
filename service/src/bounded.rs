//! A map of bounded size for what the service keeps in memory (verification reports, epoch
//! trees, anchor paths): the oldest entry inserted goes first.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A map that holds at most `cap` entries, dropping the oldest inserted first.
#[derive(Debug)]
pub(crate) struct Bounded<K, V> {
    cap: usize,
    map: HashMap<K, V>,
    order: VecDeque<K>,
}

impl<K: Eq + Hash + Clone, V: Clone> Bounded<K, V> {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            map: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    pub(crate) fn get(&self, k: &K) -> Option<V> {
        self.map.get(k).cloned()
    }

    pub(crate) fn insert(&mut self, k: K, v: V) {
        if self.cap == 0 {
            return;
        }
        if self.map.insert(k.clone(), v).is_none() {
            self.order.push_back(k);
        }
        while self.map.len() > self.cap {
            match self.order.pop_front() {
                Some(old) => self.map.remove(&old),
                None => break,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_entry_goes_first_and_zero_keeps_nothing() {
        let mut b = Bounded::new(2);
        b.insert(1, 'a');
        b.insert(2, 'b');
        b.insert(1, 'A'); // replacing does not make room
        b.insert(3, 'c');
        assert_eq!(
            (b.get(&1), b.get(&2), b.get(&3)),
            (None, Some('b'), Some('c'))
        );
        let mut none = Bounded::new(0);
        none.insert(1, 'a');
        assert_eq!(none.get(&1), None);
    }
}
