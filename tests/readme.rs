//! README's table reference is the schema: each table's column list between its markers is
//! rendered from the one declaration in `src/model/rows.rs`.

/// Each `<!-- columns:NAME -->` ... `<!-- /columns:NAME -->` block of README equals the
/// reference rendered from the schema. On a difference the expected block is printed: paste it.
#[test]
fn readme_table_reference_matches_the_schema() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md is in the repository");
    let mut wrong = Vec::new();
    for (table, expected) in mcpsift::model::tables::reference() {
        let begin = format!("<!-- columns:{table} -->\n");
        let end = format!("<!-- /columns:{table} -->");
        let found = readme.find(&begin).and_then(|b| {
            let start = b + begin.len();
            readme[start..].find(&end).map(|e| &readme[start..start + e])
        });
        if found != Some(expected.as_str()) {
            eprintln!("README.md: the `{table}` reference differs from the schema (src/model/rows.rs); expected:\n\n{begin}{expected}{end}\n");
            wrong.push(table);
        }
    }
    assert!(wrong.is_empty(), "README table reference out of date for {wrong:?} (expected text printed above)");
}
