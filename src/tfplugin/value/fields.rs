//! [`Fields`]: the entries of an object or a map, ordered by key.
//!
//! Why not `BTreeMap`: a state of ten thousand clusters holds tens of thousands of objects and maps of a handful of
//! entries each, and every B-tree node reserves room for eleven (and an object of twelve attributes takes three
//! nodes). A vector sorted by key holds exactly what it has; lookups are binary searches, and values arrive in key
//! order from every codec (cty writes objects and maps sorted), so building one is appending.
//!
//! Why not a crate's sorted-vector map: the value layer needs the dozen methods below and one rule (keys in byte
//! order, cty's order, each once, the last value of a repeated key kept); a dependency for them would be larger
//! than they are.

use std::borrow::Borrow;

use super::Value;

/// The entries of an object or a map, ordered by key, each key once.
#[derive(Clone, Default, PartialEq)]
pub struct Fields(Vec<(String, Value)>);

impl Fields {
    /// No entries.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        String: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value at `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&Value>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// The value at `key`, to change.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut Value>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    /// Whether `key` has a value.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`, giving back the value it replaces. Appending in key order costs no search.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        if self.0.last().is_none_or(|(last, _)| *last < key) {
            self.0.push((key, value));
            return None;
        }
        match self.find(key.as_str()) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`, giving back its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        self.into_iter()
    }

    /// The entries in key order, values to change.
    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&String, &mut Value)> + ExactSizeIterator {
        self.0.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + Clone {
        self.0.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + Clone {
        self.0.iter().map(|(_, v)| v)
    }

    /// Entries in any order, each key once (`Err` names a key given twice): sorted once, so keys in any order
    /// cost `n log n`, not a shift of the vector per entry.
    pub fn from_unique(mut entries: Vec<(String, Value)>) -> Result<Self, String> {
        order(&mut entries);
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(w[0].0.clone());
        }
        entries.shrink_to_fit();
        Ok(Self(entries))
    }
}

/// Orders `entries` by key, stably (of equal keys the later stays later); no work when they already are.
fn order(entries: &mut [(String, Value)]) {
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
}

impl FromIterator<(String, Value)> for Fields {
    /// Entries in any order; of a key given twice the last value stays (as a `BTreeMap` collects).
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut v: Vec<(String, Value)> = iter.into_iter().collect();
        order(&mut v);
        // Of equal neighbours `dedup_by` keeps the earlier entry: it takes the later one's value.
        v.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
        v.shrink_to_fit();
        Fields(v)
    }
}

impl<K: Into<String>, const N: usize> From<[(K, Value); N]> for Fields {
    fn from(entries: [(K, Value); N]) -> Self {
        entries.into_iter().map(|(k, v)| (k.into(), v)).collect()
    }
}

impl IntoIterator for Fields {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// The entries of [`Fields`] in key order, by reference.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, Value)>,
    fn(&'a (String, Value)) -> (&'a String, &'a Value),
>;

impl<'a> IntoIterator for &'a Fields {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(f: &Fields) -> Vec<&str> {
        f.keys().map(String::as_str).collect()
    }

    #[test]
    fn entries_stay_ordered_by_key_whatever_order_they_come_in() {
        let mut f: Fields = [
            ("b", Value::int(2)),
            ("a", Value::int(1)),
            ("b", Value::int(3)),
        ]
        .into();
        assert_eq!(keys(&f), ["a", "b"]);
        assert_eq!(
            f.get("b"),
            Some(&Value::int(3)),
            "the last value of a key stays"
        );
        assert_eq!(f.insert("c".into(), Value::int(4)), None);
        assert_eq!(f.insert("0".into(), Value::int(0)), None);
        assert_eq!(f.insert("a".into(), Value::int(5)), Some(Value::int(1)));
        assert_eq!(keys(&f), ["0", "a", "b", "c"]);
        assert_eq!(f.remove("0"), Some(Value::int(0)));
        assert!(f.contains_key("b") && !f.contains_key("0"));
        assert_eq!(f.len(), 3);
        let owned: Vec<(String, Value)> = f.into_iter().collect();
        let want = [("a", 5), ("b", 3), ("c", 4)].map(|(k, i)| (k.to_string(), Value::int(i)));
        assert_eq!(owned, want);
    }

    #[test]
    fn unique_entries_are_ordered_and_a_repeated_key_is_named() {
        let e = |k: &str| (k.to_string(), Value::Null);
        let f = Fields::from_unique(vec![e("b"), e("c"), e("a")]).expect("unique");
        assert_eq!(keys(&f), ["a", "b", "c"]);
        assert_eq!(
            Fields::from_unique(vec![e("b"), e("a"), e("b")]).err(),
            Some("b".into())
        );
        assert_eq!(
            Fields::from_unique(vec![e("a"), e("a")]).err(),
            Some("a".into())
        );
        // Ten thousand keys in descending order: one sort, not ten thousand shifts of the vector.
        let many: Vec<_> = (0..10_000).rev().map(|i| e(&format!("k{i:05}"))).collect();
        let f = Fields::from_unique(many).expect("unique");
        assert!(f.keys().is_sorted() && f.len() == 10_000);
    }

    #[test]
    fn fields_hold_only_what_they_have() {
        let f: Fields = (0..3).map(|i| (format!("k{i}"), Value::int(i))).collect();
        assert_eq!(f.0.capacity(), 3);
    }
}
