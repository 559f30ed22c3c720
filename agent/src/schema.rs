//! Tool arguments against their JSON Schema: the subset tools use, checked in full.
//!
//! A schema with a keyword outside the subset is refused when the tool is registered rather
//! than checked in part: a constraint nobody checks is a constraint a model can break. Defaults
//! (`default`) are never applied: arguments run as the model wrote them, or not at all.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// A checked schema, ready to validate arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Schema {
    types: Vec<Type>,
    properties: BTreeMap<String, Schema>,
    required: Vec<String>,
    /// `None`: any extra property; `Some(None)`: none; `Some(Some(s))`: each checked by `s`.
    additional: Option<Option<Box<Schema>>>,
    items: Option<Box<Schema>>,
    choices: Option<Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Object,
    Array,
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

impl Type {
    fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "object" => Type::Object,
            "array" => Type::Array,
            "string" => Type::String,
            "number" => Type::Number,
            "integer" => Type::Integer,
            "boolean" => Type::Boolean,
            "null" => Type::Null,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::Object => "an object",
            Type::Array => "an array",
            Type::String => "a string",
            Type::Number => "a number",
            Type::Integer => "an integer",
            Type::Boolean => "true or false",
            Type::Null => "null",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Type::Object, Value::Object(_))
            | (Type::Array, Value::Array(_))
            | (Type::String, Value::String(_))
            | (Type::Boolean, Value::Bool(_))
            | (Type::Null, Value::Null)
            | (Type::Number, Value::Number(_)) => true,
            (Type::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

/// Why a tool's schema cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct SchemaError {
    at: String,
    message: String,
}

/// Why arguments do not fit a schema: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub(crate) at: String,
    pub(crate) message: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}` {}", self.at, self.message)
        }
    }
}

/// Keywords that describe and constrain nothing: accepted, not checked.
const ANNOTATIONS: &[&str] = &["description", "title", "examples", "$schema", "$comment"];

impl Schema {
    /// Compiles a tool's argument schema, which must describe an object.
    pub(crate) fn compile(schema: &Value) -> Result<Schema, SchemaError> {
        let compiled = Schema::compile_at(schema, "arguments")?;
        if compiled.types != [Type::Object] {
            return Err(SchemaError {
                at: "arguments".into(),
                message: "a tool's arguments must be `\"type\": \"object\"`".into(),
            });
        }
        Ok(compiled)
    }

    fn compile_at(schema: &Value, at: &str) -> Result<Schema, SchemaError> {
        let fail = |message: String| SchemaError {
            at: at.to_owned(),
            message,
        };
        let Value::Object(map) = schema else {
            return Err(fail("a schema must be a JSON object".into()));
        };
        let mut out = Schema {
            types: Vec::new(),
            properties: BTreeMap::new(),
            required: Vec::new(),
            additional: None,
            items: None,
            choices: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
        };
        for (key, value) in map {
            match key.as_str() {
                "type" => {
                    out.types = types(value).ok_or_else(|| {
                        fail(format!(
                            "`type` {value} is not a JSON type or a list of them"
                        ))
                    })?
                }
                "properties" => {
                    let Value::Object(properties) = value else {
                        return Err(fail("`properties` must be an object".into()));
                    };
                    for (name, property) in properties {
                        let inner = Schema::compile_at(property, &format!("{at}.{name}"))?;
                        out.properties.insert(name.clone(), inner);
                    }
                }
                "required" => {
                    out.required = value
                        .as_array()
                        .and_then(|names| {
                            names
                                .iter()
                                .map(|n| n.as_str().map(str::to_owned))
                                .collect()
                        })
                        .ok_or_else(|| fail("`required` must be a list of names".into()))?;
                }
                "additionalProperties" => {
                    out.additional = match value {
                        Value::Bool(true) => None,
                        Value::Bool(false) => Some(None),
                        other => Some(Some(Box::new(Schema::compile_at(
                            other,
                            &format!("{at}.*"),
                        )?))),
                    };
                }
                "items" => {
                    out.items = Some(Box::new(Schema::compile_at(value, &format!("{at}[]"))?))
                }
                "enum" => {
                    out.choices = Some(
                        value
                            .as_array()
                            .cloned()
                            .ok_or_else(|| fail("`enum` must be a list".into()))?,
                    );
                }
                "const" => out.choices = Some(vec![value.clone()]),
                "minimum" => out.minimum = Some(number(value, key, at)?),
                "maximum" => out.maximum = Some(number(value, key, at)?),
                "exclusiveMinimum" => out.exclusive_minimum = Some(number(value, key, at)?),
                "exclusiveMaximum" => out.exclusive_maximum = Some(number(value, key, at)?),
                "minLength" => out.min_length = Some(count(value, key, at)?),
                "maxLength" => out.max_length = Some(count(value, key, at)?),
                "minItems" => out.min_items = Some(count(value, key, at)?),
                "maxItems" => out.max_items = Some(count(value, key, at)?),
                // Never applied: a default would run a tool with arguments the model did not give.
                "default" => {}
                key if ANNOTATIONS.contains(&key) => {}
                other => {
                    return Err(fail(format!(
                        "`{other}` is not checked by this crate; remove it, or check it in the tool"
                    )));
                }
            }
        }
        if let Some(missing) = out
            .required
            .iter()
            .find(|name| !out.properties.contains_key(*name) && out.additional == Some(None))
        {
            return Err(fail(format!("`{missing}` is required but not allowed")));
        }
        Ok(out)
    }

    /// Whether the schema declares any property (a tool that takes arguments).
    pub(crate) fn takes_arguments(&self) -> bool {
        !self.properties.is_empty()
    }

    /// Checks `value`, reporting the first place it does not fit.
    pub(crate) fn check(&self, value: &Value) -> Result<(), Mismatch> {
        self.check_at(value, "")
    }

    fn check_at(&self, value: &Value, at: &str) -> Result<(), Mismatch> {
        let fail = |message: String| Mismatch {
            at: at.to_owned(),
            message,
        };
        if !self.types.is_empty() && !self.types.iter().any(|t| t.admits(value)) {
            let wanted: Vec<_> = self.types.iter().map(|t| t.name()).collect();
            let message = format!("must be {}", wanted.join(" or "));
            return Err(if at.is_empty() {
                fail(format!("the arguments {message}"))
            } else {
                fail(message)
            });
        }
        if let Some(choices) = &self.choices
            && !choices.contains(value)
        {
            let listed: Vec<String> = choices.iter().map(Value::to_string).collect();
            return Err(fail(format!("must be one of {}", listed.join(", "))));
        }
        match value {
            Value::Object(map) => self.check_object(map, at),
            Value::Array(items) => {
                let len = items.len() as u64;
                if self.min_items.is_some_and(|min| len < min)
                    || self.max_items.is_some_and(|max| len > max)
                {
                    return Err(fail(format!(
                        "has {len} items, outside {}",
                        bounds(self.min_items, self.max_items)
                    )));
                }
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        schema.check_at(item, &format!("{at}[{i}]"))?;
                    }
                }
                Ok(())
            }
            Value::String(text) => {
                let len = text.chars().count() as u64;
                if self.min_length.is_some_and(|min| len < min)
                    || self.max_length.is_some_and(|max| len > max)
                {
                    return Err(fail(format!(
                        "has {len} characters, outside {}",
                        bounds(self.min_length, self.max_length)
                    )));
                }
                Ok(())
            }
            Value::Number(n) => {
                let n = n.as_f64().unwrap_or(f64::NAN);
                let below = self.minimum.is_some_and(|m| n < m)
                    || self.exclusive_minimum.is_some_and(|m| n <= m);
                let above = self.maximum.is_some_and(|m| n > m)
                    || self.exclusive_maximum.is_some_and(|m| n >= m);
                if below || above || n.is_nan() {
                    return Err(fail(format!("is {n}, out of range")));
                }
                Ok(())
            }
            Value::Bool(_) | Value::Null => Ok(()),
        }
    }

    fn check_object(&self, map: &Map<String, Value>, at: &str) -> Result<(), Mismatch> {
        let join = |name: &str| {
            if at.is_empty() {
                name.to_owned()
            } else {
                format!("{at}.{name}")
            }
        };
        for name in &self.required {
            if !map.contains_key(name) {
                return Err(Mismatch {
                    at: join(name),
                    message: "is required and missing".into(),
                });
            }
        }
        for (name, value) in map {
            match (self.properties.get(name), &self.additional) {
                (Some(schema), _) => schema.check_at(value, &join(name))?,
                (None, None) => {}
                (None, Some(None)) => {
                    return Err(Mismatch {
                        at: join(name),
                        message: "is not an argument of this tool".into(),
                    });
                }
                (None, Some(Some(schema))) => schema.check_at(value, &join(name))?,
            }
        }
        Ok(())
    }
}

fn types(value: &Value) -> Option<Vec<Type>> {
    match value {
        Value::String(name) => Some(vec![Type::parse(name)?]),
        Value::Array(names) => names.iter().map(|n| Type::parse(n.as_str()?)).collect(),
        _ => None,
    }
}

fn number(value: &Value, key: &str, at: &str) -> Result<f64, SchemaError> {
    value.as_f64().ok_or_else(|| SchemaError {
        at: at.to_owned(),
        message: format!("`{key}` must be a number"),
    })
}

fn count(value: &Value, key: &str, at: &str) -> Result<u64, SchemaError> {
    value.as_u64().ok_or_else(|| SchemaError {
        at: at.to_owned(),
        message: format!("`{key}` must be a whole number"),
    })
}

fn bounds(min: Option<u64>, max: Option<u64>) -> String {
    match (min, max) {
        (Some(min), Some(max)) => format!("{min} to {max}"),
        (Some(min), None) => format!("at least {min}"),
        (None, Some(max)) => format!("at most {max}"),
        (None, None) => "any".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Schema;

    fn calculator() -> Schema {
        Schema::compile(&json!({
            "type": "object",
            "properties": {
                "expression": { "type": "string", "minLength": 1, "description": "what to compute" },
                "precision": { "type": "integer", "minimum": 0, "maximum": 12 }
            },
            "required": ["expression"],
            "additionalProperties": false
        }))
        .expect("the schema compiles")
    }

    #[test]
    fn arguments_that_fit_pass() {
        assert_eq!(calculator().check(&json!({"expression": "1+2"})), Ok(()));
        assert_eq!(
            calculator().check(&json!({"expression": "1", "precision": 3})),
            Ok(())
        );
    }

    #[test]
    fn each_way_of_not_fitting_is_named_with_its_place() {
        let schema = calculator();
        let fail = |value| schema.check(&value).expect_err("refused").to_string();
        assert_eq!(fail(json!({})), "`expression` is required and missing");
        assert_eq!(
            fail(json!({"expression": 3})),
            "`expression` must be a string"
        );
        assert_eq!(
            fail(json!({"expression": ""})),
            "`expression` has 0 characters, outside at least 1"
        );
        assert_eq!(
            fail(json!({"expression": "1", "precision": 1.5})),
            "`precision` must be an integer"
        );
        assert_eq!(
            fail(json!({"expression": "1", "precision": 13})),
            "`precision` is 13, out of range"
        );
        assert_eq!(
            fail(json!({"expression": "1", "rm": "-rf"})),
            "`rm` is not an argument of this tool"
        );
        assert_eq!(fail(json!(["1+2"])), "the arguments must be an object");
    }

    #[test]
    fn nested_places_are_paths() {
        let schema = Schema::compile(&json!({
            "type": "object",
            "properties": { "to": { "type": "array", "items": { "type": "string", "enum": ["ops", "billing"] }, "minItems": 1 } },
            "required": ["to"]
        }))
        .expect("compiles");
        assert_eq!(schema.check(&json!({"to": ["ops"]})), Ok(()));
        assert_eq!(
            schema
                .check(&json!({"to": ["ops", "everyone"]}))
                .expect_err("refused")
                .to_string(),
            "`to[1]` must be one of \"ops\", \"billing\""
        );
        assert_eq!(
            schema
                .check(&json!({"to": []}))
                .expect_err("refused")
                .to_string(),
            "`to` has 0 items, outside at least 1"
        );
    }

    #[test]
    fn a_schema_that_cannot_be_checked_in_full_is_refused() {
        let pattern = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9]+$"}}});
        assert_eq!(
            Schema::compile(&pattern).expect_err("refused").to_string(),
            "arguments.id: `pattern` is not checked by this crate; remove it, or check it in the tool"
        );
        let not_object = json!({"type": "string"});
        assert!(Schema::compile(&not_object).is_err());
        let bad_type = json!({"type": "object", "properties": {"n": {"type": "float"}}});
        assert!(Schema::compile(&bad_type).is_err());
    }
}
