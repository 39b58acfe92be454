//! `multipleOf` with a decimal step, beside bounds or alone.

use super::Enforced;
use serde_json::json;

#[test]
fn money_with_a_cent_step_and_bounds() {
    let schema = Enforced::new(json!({
        "type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 10000
    }));
    schema.agrees_on_all(&[
        "0", "0.01", "0.1", "0.99", "1", "9999.99", "10000", "10000.01", "-0.01", "0.005",
        "12.345", "5000.5", "0.07", "1e-2", "100.10",
    ]);
    schema.samples_validate(40);
}

#[test]
fn steps_that_are_not_powers_of_ten() {
    for (step, bounds) in [
        (json!(0.25), json!({"minimum": -1, "exclusiveMaximum": 2})),
        (json!(0.5), json!({"exclusiveMinimum": 0, "maximum": 5.5})),
        (json!(2.5), json!({"minimum": -7.5, "maximum": 100})),
        (json!(0.3), json!({"minimum": 0.1, "maximum": 1.2})),
    ] {
        let mut schema = bounds.clone();
        schema["type"] = json!("number");
        schema["multipleOf"] = step;
        let schema = Enforced::new(schema);
        schema.agrees_on_all(&[
            "-8", "-7.5", "-5", "-1.25", "-1", "-0.75", "0", "0.1", "0.25", "0.3", "0.5", "0.6",
            "0.75", "0.9", "1", "1.2", "1.25", "1.5", "1.75", "2", "2.5", "5.5", "6", "97.5",
            "100", "102.5", "1.0001",
        ]);
        schema.samples_validate(30);
    }
}

#[test]
fn a_decimal_step_alone_and_one_sided() {
    for schema in [
        json!({"type": "number", "multipleOf": 0.25}),
        json!({"type": "number", "multipleOf": 0.05, "minimum": 0}),
        json!({"type": "number", "multipleOf": 0.1, "maximum": -1}),
    ] {
        let schema = Enforced::new(schema);
        schema.agrees_on_all(&[
            "0", "0.05", "0.1", "0.25", "-0.25", "-1", "-1.1", "-1.05", "-0.9", "3.75", "3.7",
            "123456.5", "-99.95",
        ]);
        schema.samples_validate(30);
    }
}

#[test]
fn small_steps_whose_small_multiples_are_written_with_an_exponent() {
    // Latitude to a micro-degree: 1e-6 to 9e-6 are written `1e-6` … `9e-6`.
    let schema = Enforced::new(json!({
        "type": "number", "multipleOf": 0.000001, "minimum": -90, "maximum": 90
    }));
    schema.agrees_on_all(&[
        "0",
        "1e-6",
        "-9e-6",
        "0.00001",
        "0.000011",
        "45.123456",
        "-90",
        "90",
        "90.000001",
        "1.5e-6",
        "0.0000001",
    ]);
    schema.samples_validate(40);
}

#[test]
fn draft_04_writes_integral_numbers_with_a_point() {
    let schema = Enforced::new(json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "number", "multipleOf": 0.01, "minimum": 0
    }));
    schema.agrees_on_all(&["1000.0", "0.0", "12.5", "12.345", "-1.0"]);
    schema.samples_validate(20);
}
