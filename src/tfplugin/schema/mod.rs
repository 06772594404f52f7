//! Typed schema builder: what Terraform learns from `GetProviderSchema`.
//!
//! ```
//! use tfsveltos::tfplugin::{Attribute, Block, NestedBlock, Schema, Type, Nesting};
//! let schema = Schema::new(1)
//!     .markdown_description("Registers things.")
//!     .attribute(Attribute::string("name").required().description("Name of the thing."))
//!     .attribute(Attribute::string("id").computed())
//!     .attribute(Attribute::new("labels", Type::map(Type::String)).optional())
//!     .attribute(Attribute::string("token").optional().sensitive())
//!     .attribute(Attribute::nested("endpoints", Nesting::List, [Attribute::string("url").required()]).optional())
//!     .block(NestedBlock::list("rule", Block::new().attribute(Attribute::bool("enabled").optional())).max_items(3));
//! assert!(schema.block.attribute_named("token").is_some_and(|a| a.sensitive));
//! ```

mod computed;
#[cfg(test)]
mod tests;
mod write_only;

use super::path::{AttributePath, PathStep};
use super::value::{Type, Value, ValueError};
use std::collections::{BTreeMap, BTreeSet};

/// How description text is formatted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StringKind {
    /// Plain text.
    #[default]
    Plain,
    /// Markdown.
    Markdown,
}

/// A versioned schema for a provider configuration, resource or data source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Schema version (resources: bump it when the state layout changes, and upgrade old states).
    pub version: i64,
    /// The top-level block.
    pub block: Block,
}

/// A block: attributes and nested blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// Attributes, in declaration order.
    pub attributes: Vec<Attribute>,
    /// Nested block types, in declaration order.
    pub blocks: Vec<NestedBlock>,
    /// Description.
    pub description: String,
    /// Description format.
    pub description_kind: StringKind,
    /// Whether the whole block is deprecated.
    pub deprecated: bool,
    /// Deprecation message (protocol 6.9+; older clients ignore it).
    pub deprecation_message: String,
}

/// What an attribute holds: a value of a type, or nested attributes.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeType {
    /// A value of a cty type.
    Type(Type),
    /// Nested attributes (protocol 6 "nested attribute types").
    Nested(NestedAttributes),
}

/// Nesting of nested attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    /// One object.
    Single,
    /// A list of objects.
    List,
    /// A set of objects.
    Set,
    /// A map of objects.
    Map,
}

/// Nested attributes of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedAttributes {
    /// How the objects are nested.
    pub nesting: Nesting,
    /// The objects' attributes.
    pub attributes: Vec<Attribute>,
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Name.
    pub name: String,
    /// Type or nested attributes.
    pub kind: AttributeType,
    /// Description.
    pub description: String,
    /// Description format.
    pub description_kind: StringKind,
    /// Must be set in configuration.
    pub required: bool,
    /// May be set in configuration.
    pub optional: bool,
    /// Set by the provider (with `optional`: when not configured).
    pub computed: bool,
    /// Hidden in plan output.
    pub sensitive: bool,
    /// Write-only (protocol 6.11; managed resources only): given in configuration, never stored in state or plan.
    /// The plugin layer nulls it in every state it answers with ([`Block::null_write_only`]) and refuses a value
    /// for it from a client that does not support write-only attributes.
    pub write_only: bool,
    /// Deprecated.
    pub deprecated: bool,
    /// Deprecation message.
    pub deprecation_message: String,
}

/// Nesting of nested blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockNesting {
    /// At most one block; null when absent.
    Single,
    /// Exactly one block, never null (attributes null when absent).
    Group,
    /// An ordered list of blocks.
    List,
    /// A set of blocks.
    Set,
    /// Labelled blocks, by label.
    Map,
}

/// A nested block type.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedBlock {
    /// The block type name as written in configuration.
    pub type_name: String,
    /// The block's contents.
    pub block: Block,
    /// Nesting mode.
    pub nesting: BlockNesting,
    /// Minimum number of blocks (list/set).
    pub min_items: i64,
    /// Maximum number of blocks (list/set; 0 = unlimited).
    pub max_items: i64,
}

/// The `description`, `markdown_description` and `deprecated` builders of [`Block`] and [`Attribute`], which
/// hold the same four fields for them.
macro_rules! description_setters {
    ($what:literal) => {
        #[doc = concat!("Sets a plain-text description of the ", $what, ".")]
        pub fn description(mut self, text: impl Into<String>) -> Self {
            self.description = text.into();
            self.description_kind = StringKind::Plain;
            self
        }

        #[doc = concat!("Sets a markdown description of the ", $what, ".")]
        pub fn markdown_description(mut self, text: impl Into<String>) -> Self {
            self.description = text.into();
            self.description_kind = StringKind::Markdown;
            self
        }

        #[doc = concat!("Marks the ", $what, " deprecated, with a message.")]
        pub fn deprecated(mut self, message: impl Into<String>) -> Self {
            self.deprecated = true;
            self.deprecation_message = message.into();
            self
        }
    };
}

impl Schema {
    /// An empty schema with the given version.
    pub fn new(version: i64) -> Self {
        Self {
            version,
            block: Block::new(),
        }
    }

    /// Adds an attribute to the top-level block.
    pub fn attribute(mut self, attribute: Attribute) -> Self {
        self.block.attributes.push(attribute);
        self
    }

    /// Adds a nested block type to the top-level block.
    pub fn block(mut self, block: NestedBlock) -> Self {
        self.block.blocks.push(block);
        self
    }

    /// Sets a plain-text description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.block = self.block.description(text);
        self
    }

    /// Sets a markdown description.
    pub fn markdown_description(mut self, text: impl Into<String>) -> Self {
        self.block = self.block.markdown_description(text);
        self
    }

    /// Marks the whole schema deprecated.
    pub fn deprecated(mut self, message: impl Into<String>) -> Self {
        self.block = self.block.deprecated(message);
        self
    }

    /// The object type of values of this schema.
    pub fn value_type(&self) -> Type {
        self.block.value_type()
    }

    /// Sets every computed attribute that is null in `proposed` to unknown (recursing into nested attributes
    /// and blocks): the usual plan for a create, or for an update where computed values may change.
    pub fn mark_computed_unknown(&self, proposed: &Value) -> Value {
        self.block.mark_computed_unknown(proposed)
    }

    /// Whether any attribute, however deeply nested, is write-only.
    pub fn has_write_only(&self) -> bool {
        self.block.has_write_only()
    }

    /// `value` encoded as the top-level attribute `name` of this schema's states: bytes a resource answers with
    /// there ([`AttributeBytes::Encoded`](crate::tfplugin::AttributeBytes::Encoded)). Only attributes, not
    /// blocks; a value that does not fit the attribute's type is an error naming its path.
    pub fn encode_attribute(
        &self,
        name: &str,
        value: &Value,
    ) -> Result<crate::tfplugin::EncodedAttribute, ValueError> {
        let Some(attribute) = self.block.attribute_named(name) else {
            let path = AttributePath::attr(name);
            return Err(ValueError::new(&path, "the schema has no such attribute"));
        };
        let bytes = super::value::msgpack::encode(value, &attribute.value_type()).map_err(|e| {
            let mut path = AttributePath::attr(name);
            e.path.steps().iter().for_each(|s| path.push(s.clone()));
            ValueError::new(&path, e.message)
        })?;
        Ok(crate::tfplugin::EncodedAttribute::new(name, bytes))
    }
}

impl Block {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an attribute.
    pub fn attribute(mut self, attribute: Attribute) -> Self {
        self.attributes.push(attribute);
        self
    }

    /// Adds a nested block type.
    pub fn block(mut self, block: NestedBlock) -> Self {
        self.blocks.push(block);
        self
    }

    description_setters!("block");

    /// The attribute called `name`.
    pub fn attribute_named(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The nested block type called `name`.
    pub fn block_named(&self, name: &str) -> Option<&NestedBlock> {
        self.blocks.iter().find(|b| b.type_name == name)
    }

    /// The object type of values of this block.
    pub fn value_type(&self) -> Type {
        let mut attributes = BTreeMap::new();
        for a in &self.attributes {
            attributes.insert(a.name.clone(), a.value_type());
        }
        for b in &self.blocks {
            attributes.insert(b.type_name.clone(), b.value_type());
        }
        Type::Object {
            attributes,
            optional: BTreeSet::new(),
        }
    }
}

impl Attribute {
    /// An attribute of type `ty` (set `required()`, `optional()` and/or `computed()` next).
    pub fn new(name: impl Into<String>, ty: Type) -> Self {
        Self::with_kind(name, AttributeType::Type(ty))
    }

    fn with_kind(name: impl Into<String>, kind: AttributeType) -> Self {
        Self {
            name: name.into(),
            kind,
            description: String::new(),
            description_kind: StringKind::Plain,
            required: false,
            optional: false,
            computed: false,
            sensitive: false,
            write_only: false,
            deprecated: false,
            deprecation_message: String::new(),
        }
    }

    /// A `string` attribute.
    pub fn string(name: impl Into<String>) -> Self {
        Self::new(name, Type::String)
    }

    /// A `number` attribute.
    pub fn number(name: impl Into<String>) -> Self {
        Self::new(name, Type::Number)
    }

    /// A `bool` attribute.
    pub fn bool(name: impl Into<String>) -> Self {
        Self::new(name, Type::Bool)
    }

    /// A `dynamic` attribute.
    pub fn dynamic(name: impl Into<String>) -> Self {
        Self::new(name, Type::Dynamic)
    }

    /// A `list(elem)` attribute.
    pub fn list(name: impl Into<String>, elem: Type) -> Self {
        Self::new(name, Type::list(elem))
    }

    /// A `set(elem)` attribute.
    pub fn set(name: impl Into<String>, elem: Type) -> Self {
        Self::new(name, Type::set(elem))
    }

    /// A `map(elem)` attribute.
    pub fn map(name: impl Into<String>, elem: Type) -> Self {
        Self::new(name, Type::map(elem))
    }

    /// An attribute with nested attributes.
    pub fn nested(
        name: impl Into<String>,
        nesting: Nesting,
        attributes: impl IntoIterator<Item = Attribute>,
    ) -> Self {
        Self::with_kind(
            name,
            AttributeType::Nested(NestedAttributes {
                nesting,
                attributes: attributes.into_iter().collect(),
            }),
        )
    }

    /// Must be configured.
    pub fn required(mut self) -> Self {
        self.required = true;
        self.optional = false;
        self
    }

    /// May be configured.
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self.required = false;
        self
    }

    /// Set by the provider.
    pub fn computed(mut self) -> Self {
        self.computed = true;
        self
    }

    /// Hidden in plan output and logs.
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }

    /// Write-only: configured (`optional()` or `required()`), handed to plan and apply in the configuration, and
    /// never stored (Terraform and OpenTofu 1.11+; managed resources only): see the field of the same name.
    pub fn write_only(mut self) -> Self {
        self.write_only = true;
        self
    }

    /// Whether this attribute is write-only or holds nested attributes that are.
    pub fn has_write_only(&self) -> bool {
        self.write_only
            || matches!(&self.kind, AttributeType::Nested(n) if n.attributes.iter().any(Attribute::has_write_only))
    }

    description_setters!("attribute");

    /// The type of this attribute's values.
    pub fn value_type(&self) -> Type {
        match &self.kind {
            AttributeType::Type(t) => t.clone(),
            AttributeType::Nested(n) => {
                let mut attributes = BTreeMap::new();
                let mut optional = BTreeSet::new();
                for a in &n.attributes {
                    attributes.insert(a.name.clone(), a.value_type());
                    if a.optional || a.computed {
                        optional.insert(a.name.clone());
                    }
                }
                let obj = Type::Object {
                    attributes,
                    optional,
                };
                match n.nesting {
                    Nesting::Single => obj,
                    Nesting::List => Type::list(obj),
                    Nesting::Set => Type::set(obj),
                    Nesting::Map => Type::map(obj),
                }
            }
        }
    }
}

impl NestedBlock {
    fn with(type_name: impl Into<String>, block: Block, nesting: BlockNesting) -> Self {
        Self {
            type_name: type_name.into(),
            block,
            nesting,
            min_items: 0,
            max_items: 0,
        }
    }

    /// At most one block (null when absent).
    pub fn single(type_name: impl Into<String>, block: Block) -> Self {
        Self::with(type_name, block, BlockNesting::Single)
    }

    /// Exactly one block, never null.
    pub fn group(type_name: impl Into<String>, block: Block) -> Self {
        Self::with(type_name, block, BlockNesting::Group)
    }

    /// A list of blocks.
    pub fn list(type_name: impl Into<String>, block: Block) -> Self {
        Self::with(type_name, block, BlockNesting::List)
    }

    /// A set of blocks.
    pub fn set(type_name: impl Into<String>, block: Block) -> Self {
        Self::with(type_name, block, BlockNesting::Set)
    }

    /// Labelled blocks.
    pub fn map(type_name: impl Into<String>, block: Block) -> Self {
        Self::with(type_name, block, BlockNesting::Map)
    }

    /// Minimum number of blocks.
    pub fn min_items(mut self, n: i64) -> Self {
        self.min_items = n;
        self
    }

    /// Maximum number of blocks.
    pub fn max_items(mut self, n: i64) -> Self {
        self.max_items = n;
        self
    }

    /// The type of this block type's value in the parent object.
    pub fn value_type(&self) -> Type {
        let obj = self.block.value_type();
        match self.nesting {
            BlockNesting::Single | BlockNesting::Group => obj,
            BlockNesting::List => Type::list(obj),
            BlockNesting::Set => Type::set(obj),
            BlockNesting::Map => Type::map(obj),
        }
    }
}
