//! A query condition bound to an array as the query engine's [`CellFilter`]: TileDB-Py's
//! condition text (or a built [`Condition`]) typed against the array's schema, evaluated per
//! cell and used to skip tiles whose min/max/null counts show no cell can pass.

use super::filter::CellFilter;
use crate::array::condition::{self, Condition, TileStats, Tri};
use crate::array::schema::{ArraySchema, Enumeration};
use crate::array::{Array, FieldData};
use crate::error::Result;
use std::sync::Arc;

/// A condition typed against an array's schema.
#[derive(Clone, Debug)]
pub struct QueryCondition {
    condition: Condition,
    schema: Arc<ArraySchema>,
    fields: Vec<String>,
}

impl QueryCondition {
    /// Parses TileDB-Py's condition `text` against `array`'s schema (loading the attributes'
    /// enumerations).
    pub fn parse(array: &Array, text: &str) -> Result<QueryCondition> {
        let schema = array.schema();
        let mut enumerations = Vec::new();
        for a in &schema.attributes {
            if let Some(e) = &a.enumeration
                && !enumerations.iter().any(|x: &Enumeration| &x.name == e)
            {
                enumerations.push(array.enumeration(e)?);
            }
        }
        let c = condition::parse_condition(text, schema, &enumerations)?;
        Ok(QueryCondition::new(array, c))
    }

    /// A condition already typed for `array` (values as its fields' bytes).
    pub fn new(array: &Array, condition: Condition) -> QueryCondition {
        let fields = condition.fields().into_iter().map(String::from).collect();
        QueryCondition {
            condition,
            schema: Arc::new(array.schema().clone()),
            fields,
        }
    }

    /// The typed condition.
    pub fn condition(&self) -> &Condition {
        &self.condition
    }
}

impl CellFilter for QueryCondition {
    fn fields(&self) -> Vec<String> {
        self.fields.clone()
    }

    fn evaluate(&self, cells: &[FieldData]) -> Result<Vec<bool>> {
        condition::evaluate_fields(&self.condition, &self.schema, cells)
    }

    fn prune(&self, stats: &dyn Fn(&str) -> Option<TileStats>) -> Tri {
        condition::prune(&self.condition, &self.schema, stats)
    }
}
