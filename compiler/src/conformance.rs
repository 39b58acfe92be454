//! Conformance: does a compiled schema accept exactly its valid instances?
//!
//! For one schema and its test instances: compile; for each instance, its canonical text
//! ([`crate::schema::canon`]) must be accepted by the grammar exactly when the instance is
//! valid. A schema **passes** when every instance agrees; it is **unsound** when the
//! grammar accepts an invalid instance, **incomplete** when it rejects a valid one, and a
//! **compile error** when it does not compile (an unsatisfiable schema whose instances are
//! all invalid passes: refusing it is right).
//!
//! File handling lives with the callers (the `gbnfc conformance` command and the tests);
//! this module works on values.

use serde_json::Value;

use crate::recognize::Recognizer;
use crate::schema::{self, canon, document::Document, CompileError, KeywordStatus, Options};

/// One test instance.
#[derive(Debug, Clone)]
pub struct Instance {
    /// What it tests.
    pub description: String,
    /// The value.
    pub data: Value,
    /// Whether the schema accepts it.
    pub valid: bool,
}

/// How one instance came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceOutcome {
    /// The grammar agreed with `valid`.
    Pass,
    /// The grammar accepted an invalid instance.
    Unsound,
    /// The grammar rejected a valid instance.
    Incomplete,
    /// The schema did not compile.
    CompileError(String),
}

/// How one schema came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaOutcome {
    /// Every instance agreed.
    Pass,
    /// The schema did not compile (and not all instances were invalid).
    CompileError(String),
    /// Some invalid instance was accepted.
    Unsound,
    /// Some valid instance was rejected (and none invalid accepted).
    Incomplete,
}

/// The result for one schema.
#[derive(Debug, Clone)]
pub struct SchemaResult {
    /// The overall outcome.
    pub outcome: SchemaOutcome,
    /// Per instance, in order.
    pub instances: Vec<(String, InstanceOutcome)>,
    /// The compile reported a keyword as validation-only (so unsound instances are
    /// expected and do not break the contract).
    pub validation_only: bool,
}

/// Checks one schema against its instances.
pub fn check_schema(schema: &Value, instances: &[Instance], options: &Options<'_>) -> SchemaResult {
    let compiled = schema::compile(schema, options);
    let compiled = match compiled {
        Ok(compiled) => compiled,
        Err(error) => {
            let all_invalid = instances.iter().all(|i| !i.valid);
            let unsatisfiable = matches!(error, CompileError::Unsatisfiable { .. });
            let outcome = if unsatisfiable && all_invalid {
                InstanceOutcome::Pass
            } else {
                InstanceOutcome::CompileError(error.to_string())
            };
            return SchemaResult {
                outcome: if outcome == InstanceOutcome::Pass {
                    SchemaOutcome::Pass
                } else {
                    SchemaOutcome::CompileError(error.to_string())
                },
                instances: instances
                    .iter()
                    .map(|i| (i.description.clone(), outcome.clone()))
                    .collect(),
                validation_only: false,
            };
        }
    };
    let validation_only = compiled
        .diagnostics
        .iter()
        .any(|d| d.status == KeywordStatus::ValidationOnly);
    let recognizer = match Recognizer::new(&compiled.grammar) {
        Ok(r) => r,
        Err(e) => {
            let message = format!("internal: {e}");
            return SchemaResult {
                outcome: SchemaOutcome::CompileError(message.clone()),
                instances: instances
                    .iter()
                    .map(|i| {
                        (
                            i.description.clone(),
                            InstanceOutcome::CompileError(message.clone()),
                        )
                    })
                    .collect(),
                validation_only,
            };
        }
    };
    let document = Document::from_input(schema, options.remote);
    let mut results = Vec::new();
    for instance in instances {
        let text = match &document {
            Ok(doc) => canon::canonical_text(&instance.data, doc),
            Err(_) => instance.data.to_string(),
        };
        let accepted = recognizer.recognize(&text).accepted;
        let outcome = match (accepted, instance.valid) {
            (true, true) | (false, false) => InstanceOutcome::Pass,
            (true, false) => InstanceOutcome::Unsound,
            (false, true) => InstanceOutcome::Incomplete,
        };
        results.push((instance.description.clone(), outcome));
    }
    let outcome = if results.iter().any(|(_, o)| *o == InstanceOutcome::Unsound) {
        SchemaOutcome::Unsound
    } else if results
        .iter()
        .any(|(_, o)| *o == InstanceOutcome::Incomplete)
    {
        SchemaOutcome::Incomplete
    } else {
        SchemaOutcome::Pass
    };
    SchemaResult {
        outcome,
        instances: results,
        validation_only,
    }
}

/// Reads the instances of a test-suite group or a MaskBench file (`tests: [{description,
/// data, valid}]`).
pub fn instances(tests: &Value) -> Vec<Instance> {
    tests
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| Instance {
            description: t
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: t.get("data").cloned().unwrap_or(Value::Null),
            valid: t.get("valid").and_then(Value::as_bool).unwrap_or(false),
        })
        .collect()
}
