//! Computed attributes in a proposed state: unknown until the provider knows them.

use super::{Attribute, AttributeType, Block, BlockNesting, Nesting, Value};

impl Block {
    /// See [`Schema::mark_computed_unknown`].
    pub fn mark_computed_unknown(&self, proposed: &Value) -> Value {
        let Value::Object(map) = proposed else {
            return proposed.clone();
        };
        let mut out = map.clone();
        for a in &self.attributes {
            let current = map.get(&a.name).cloned().unwrap_or(Value::Null);
            let new = if a.computed && current.is_null() {
                Value::Unknown(Box::default())
            } else if let AttributeType::Nested(n) = &a.kind {
                mark_nested(&n.attributes, n.nesting, &current)
            } else {
                current
            };
            out.insert(a.name.clone(), new);
        }
        for b in &self.blocks {
            if let Some(current) = map.get(&b.type_name) {
                let new = match (b.nesting, current) {
                    (BlockNesting::Single | BlockNesting::Group, v) => {
                        b.block.mark_computed_unknown(v)
                    }
                    (_, Value::List(items)) => Value::List(
                        items
                            .iter()
                            .map(|v| b.block.mark_computed_unknown(v))
                            .collect(),
                    ),
                    (_, Value::Set(items)) => Value::Set(
                        items
                            .iter()
                            .map(|v| b.block.mark_computed_unknown(v))
                            .collect(),
                    ),
                    (_, Value::Map(items)) => Value::Map(
                        items
                            .iter()
                            .map(|(k, v)| (k.clone(), b.block.mark_computed_unknown(v)))
                            .collect(),
                    ),
                    (_, v) => v.clone(),
                };
                out.insert(b.type_name.clone(), new);
            }
        }
        Value::Object(out)
    }
}

/// [`Block::mark_computed_unknown`] over nested attributes, as a block of `nesting`.
fn mark_nested(attrs: &[Attribute], nesting: Nesting, current: &Value) -> Value {
    let block = Block {
        attributes: attrs.to_vec(),
        ..Block::default()
    };
    match (nesting, current) {
        (Nesting::Single, v) => block.mark_computed_unknown(v),
        (_, Value::List(items)) => Value::List(
            items
                .iter()
                .map(|v| block.mark_computed_unknown(v))
                .collect(),
        ),
        (_, Value::Set(items)) => Value::Set(
            items
                .iter()
                .map(|v| block.mark_computed_unknown(v))
                .collect(),
        ),
        (_, Value::Map(items)) => Value::Map(
            items
                .iter()
                .map(|(k, v)| (k.clone(), block.mark_computed_unknown(v)))
                .collect(),
        ),
        (_, v) => v.clone(),
    }
}
