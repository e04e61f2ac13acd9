//! The engine's generated ECO table is exactly what the generator makes of
//! `data/eco/*.tsv`: every row parsed, its moves legal, no position named
//! twice. With `UPDATE_ECO_TABLE=1` the test writes the file instead.

use std::path::Path;

use engine::formats::eco::EcoTable;

const SOURCES: &str = "data/eco/{a,b,c,d,e}.tsv";

#[test]
fn generated_eco_table_matches_the_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut table = EcoTable::default();
    for volume in ["a", "b", "c", "d", "e"] {
        let name = format!("data/eco/{volume}.tsv");
        let text = std::fs::read_to_string(root.join(&name)).unwrap();
        table.add(&text, &name).unwrap();
    }
    assert_eq!(table.len(), 3807);
    let generated = table.to_rust(SOURCES);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/formats/eco_table.rs");
    if std::env::var_os("UPDATE_ECO_TABLE").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == generated,
        "engine/src/formats/eco_table.rs is not the generator's output; regenerate it with \
         UPDATE_ECO_TABLE=1 cargo test --release -p engine --test eco_table"
    );
    // The bundled table is the same table.
    let bundled = EcoTable::bundled();
    assert_eq!(bundled.len(), table.len());
}
