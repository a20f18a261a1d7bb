//! The MetaHuman DNA reader (`mien_core::io::dna`) against values computed outside it:
//!
//! * OpenRigLogic's own reader-test fixtures (formats 2.1–2.8) decoded under the three load
//!   configurations of `Fixtures*.cpp` (all LODs; `maxLOD = 1`; LOD 0 only), compared with every
//!   value of the decoded JSONs (2.1, 2.3, 2.8) and, for the versions without one, with the values
//!   `Fixtures*.cpp` states (each version's decoded data is the previous one's plus its new
//!   sections);
//! * the mien ICT rig (2.8 and 2.1) against every `readerExpectations` value of
//!   `mien_ict_rig_outputs.json` (written from OpenRigLogic's reader), and the two files against
//!   each other;
//! * validation: clean for the ICT rig, failing with the PSD overlap named for the fixtures;
//! * damaged files: every truncation, a bit-flip sweep, a length of `0xFFFFFFFF`, the malformed
//!   inputs of OpenRigLogic's `TestMalformedInput.cpp`, all refused without a panic;
//! * a property of LOD filtering: any selection keeps index lists that are consistent subsets.
//!
//! The data lives in `../shared/data/metahuman_dna/` (never copied into the repository); without
//! it the tests print a notice and pass.

mod support;

use std::path::PathBuf;

use mien_core::io::dna::{
    Archetype, Direction, Dna, DnaLayers, DnaLoad, FaceWinding, FileLayout, Gender, LodSelection,
    RotationDirection, RotationSequence, RotationUnit, TranslationUnit, convert, read_dna,
};
use serde_json::Value;

fn dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/metahuman_dna")
}

fn bytes(name: &str) -> Option<Vec<u8>> {
    let p = dir().join(name);
    match std::fs::read(&p) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("notice: {} not found; DNA test skipped", p.display());
            None
        }
    }
}

fn json(name: &str) -> Option<Value> {
    let b = bytes(name)?;
    Some(serde_json::from_slice(&b).unwrap())
}

/// The three load configurations of `Fixtures*.cpp` (`lodConstraintToIndex`): 0 = maxLOD 0,
/// minLOD 1 (every LOD); 1 = maxLOD 1; 2 = maxLOD 0, minLOD 0.
fn configs() -> [LodSelection; 3] {
    [
        LodSelection::All,
        LodSelection::MaxLod(1),
        LodSelection::Range { max: 0, min: 0 },
    ]
}

fn load(b: &[u8], lods: LodSelection) -> Dna {
    read_dna(
        b,
        "fixture",
        &DnaLoad {
            layers: DnaLayers::All,
            lods,
        },
    )
    .unwrap()
}

fn u16s(v: &Value) -> Vec<u16> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u16)
        .collect()
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

fn f32s(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn v3s(v: &Value) -> Vec<[f32; 3]> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let f = f32s(x);
            [f[0], f[1], f[2]]
        })
        .collect()
}

fn names(all: &[String], idx: &[u16]) -> Vec<String> {
    idx.iter().map(|&i| all[usize::from(i)].clone()).collect()
}

fn code(s: &str) -> u16 {
    match s {
        "Vector" | "EulerAngles" | "X" => 0,
        "Quaternion" | "Y" => 1,
        "Z" => 2,
        "Gather" => 1,
        "Scatter" => 2,
        "MLP" => 3,
        other => panic!("unknown code {other}"),
    }
}

/// Every value of a decoded fixture JSON (`values`), for the three configurations.
fn check_decoded(dnas: &[Dna; 3], j: &Value) {
    let j = &j["values"];
    for (c, d) in dnas.iter().enumerate() {
        let ctx = format!("config {c}");
        let de = &d.descriptor;
        assert_eq!(de.name, j["name"].as_str().unwrap());
        assert_eq!(format!("{:?}", de.archetype).to_lowercase(), j["archetype"]);
        assert_eq!(format!("{:?}", de.gender).to_lowercase(), j["gender"]);
        assert_eq!(u64::from(de.age), j["age"].as_u64().unwrap());
        let md: Vec<Vec<String>> = j["metadata"].as_array().unwrap().iter().map(strs).collect();
        let got: Vec<Vec<String>> = de
            .metadata
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        assert_eq!(got, md);
        assert_eq!(
            format!("{:?}", de.translation_unit).to_lowercase(),
            j["translationUnit"]
        );
        assert_eq!(
            format!("{:?}", de.rotation_unit).to_lowercase(),
            j["rotationUnit"]
        );
        let cs = de.coordinate_system;
        let got: Vec<String> = [cs.x, cs.y, cs.z]
            .iter()
            .map(|a| format!("{a:?}").to_lowercase())
            .collect();
        assert_eq!(got, strs(&j["coordinateSystem"]));
        if let Some(seq) = j.get("rotationSequence") {
            assert_eq!(format!("{:?}", de.rotation_sequence).to_lowercase(), *seq);
            let got: Vec<String> = de
                .rotation_sign
                .iter()
                .map(|s| format!("{s:?}").to_lowercase())
                .collect();
            assert_eq!(got, strs(&j["rotationSign"]));
            assert_eq!(
                format!("{:?}", de.face_winding).to_lowercase(),
                j["faceWindingOrder"]
            );
        }
        assert_eq!(
            u64::from(de.lod_count),
            j["lodCount"][c].as_u64().unwrap(),
            "{ctx}"
        );
        assert_eq!(
            u64::from(de.db_max_lod),
            j["maxLODs"][c].as_u64().unwrap(),
            "{ctx}"
        );
        assert_eq!(de.complexity, j["complexity"].as_str().unwrap());
        assert_eq!(de.db_name, j["dbName"].as_str().unwrap());

        let df = &d.definition;
        assert_eq!(df.gui_control_names, strs(&j["guiControlNames"]));
        assert_eq!(df.raw_control_names, strs(&j["rawControlNames"]));
        assert_eq!(df.joint_names, strs(&j["jointNames"][c][0]), "{ctx}");
        assert_eq!(
            df.blend_shape_channel_names,
            strs(&j["blendShapeNames"][c][0]),
            "{ctx}"
        );
        assert_eq!(
            df.animated_map_names,
            strs(&j["animatedMapNames"][c][0]),
            "{ctx}"
        );
        let mesh_lists = j["meshNames"][c].as_array().unwrap();
        let total: usize = mesh_lists.iter().map(|l| l.as_array().unwrap().len()).sum();
        assert_eq!(df.mesh_names.len(), total, "{ctx}");
        let mbs = j["meshBlendShapeIndices"][c].as_array().unwrap();
        let total: usize = mbs.iter().map(|l| l.as_array().unwrap().len()).sum();
        assert_eq!(df.mesh_blend_shape_channels.len(), total, "{ctx}");
        assert_eq!(df.joint_parents, u16s(&j["jointHierarchy"][c][0]), "{ctx}");
        assert_eq!(d.behavior.psd_count as u64, j["psdCount"].as_u64().unwrap());
        assert_eq!(
            df.gui_control_names.len() as u64,
            j["guiControlCount"].as_u64().unwrap()
        );
        assert_eq!(
            df.raw_control_names.len() as u64,
            j["rawControlCount"].as_u64().unwrap()
        );

        let b = &d.behavior;
        let g2r = &b.gui_to_raw;
        assert_eq!(g2r.input_indices, u16s(&j["conditionalInputIndices"][0][0]));
        assert_eq!(
            g2r.output_indices,
            u16s(&j["conditionalOutputIndices"][0][0])
        );
        assert_eq!(g2r.from_values, f32s(&j["conditionalFromValues"][0][0]));
        assert_eq!(g2r.to_values, f32s(&j["conditionalToValues"][0][0]));
        assert_eq!(g2r.slope_values, f32s(&j["conditionalSlopeValues"][0][0]));
        assert_eq!(g2r.cut_values, f32s(&j["conditionalCutValues"][0][0]));
        assert_eq!(b.psds.rows, u16s(&j["psdRowIndices"]));
        assert_eq!(b.psds.columns, u16s(&j["psdColumnIndices"]));
        assert_eq!(b.psds.values, f32s(&j["psdValues"]));
        assert_eq!(
            b.joints.row_count as u64,
            j["jointRowCount"][c].as_u64().unwrap(),
            "{ctx}"
        );
        assert_eq!(
            b.joints.column_count as u64,
            j["jointColumnCount"].as_u64().unwrap()
        );
        let groups = j["jointGroupLODs"].as_array().unwrap();
        assert_eq!(b.joints.groups.len(), groups.len());
        assert_eq!(
            b.blend_shapes.lods,
            u16s(&j["blendShapeLODs"][0][c]),
            "{ctx}"
        );
        assert_eq!(
            b.animated_maps.lods,
            u16s(&j["animatedMapLODs"][0][c]),
            "{ctx}"
        );
        assert_eq!(
            df.animated_map_names.len() as u64,
            j["animatedMapCount"][c].as_u64().unwrap()
        );
        for (g, jg) in b.joints.groups.iter().enumerate() {
            assert_eq!(jg.lods, u16s(&j["jointGroupLODs"][g][c]), "{ctx} group {g}");
            assert_eq!(
                jg.input_indices,
                u16s(&j["jointGroupInputIndices"][g][c][0])
            );
            assert_eq!(
                jg.joint_indices,
                u16s(&j["jointGroupJointIndices"][g][c][0])
            );
            assert_eq!(jg.output_indices.len(), usize::from(jg.lods[0]));
            assert_eq!(
                jg.values.len(),
                usize::from(jg.lods[0]) * jg.input_indices.len()
            );
        }
        assert_eq!(
            b.blend_shapes.input_indices.len(),
            usize::from(b.blend_shapes.lods[0])
        );
        assert_eq!(
            b.animated_maps.conditionals.len(),
            usize::from(b.animated_maps.lods[0])
        );

        for lod in 0..de.lod_count {
            let l = usize::from(lod);
            let ctx = format!("config {c} LOD {lod}");
            let ji = df.joint_indices_for_lod(lod);
            assert_eq!(
                names(&df.joint_names, ji),
                strs(&j["jointNames"][c][l]),
                "{ctx}"
            );
            let bi = df.blend_shape_channel_indices_for_lod(lod);
            assert_eq!(
                names(&df.blend_shape_channel_names, bi),
                strs(&j["blendShapeNames"][c][l]),
                "{ctx}"
            );
            let ai = df.animated_map_indices_for_lod(lod);
            assert_eq!(
                names(&df.animated_map_names, ai),
                strs(&j["animatedMapNames"][c][l]),
                "{ctx}"
            );
            let mi = df.mesh_indices_for_lod(lod);
            assert_eq!(
                names(&df.mesh_names, mi),
                strs(&j["meshNames"][c][l]),
                "{ctx}"
            );
            assert_eq!(
                df.mesh_blend_shape_mapping_indices_for_lod(lod),
                u16s(&j["meshBlendShapeIndices"][c][l]),
                "{ctx}"
            );
            let t: Vec<[f32; 3]> = ji
                .iter()
                .map(|&i| df.neutral_joint_translations[usize::from(i)])
                .collect();
            assert_eq!(t, v3s(&j["neutralJointTranslations"][c][l]), "{ctx}");
            let r: Vec<[f32; 3]> = ji
                .iter()
                .map(|&i| df.neutral_joint_rotations[usize::from(i)])
                .collect();
            assert_eq!(r, v3s(&j["neutralJointRotations"][c][l]), "{ctx}");
            assert_eq!(
                d.joint_variable_attribute_indices(lod),
                u16s(&j["jointVariableIndices"][c][l]),
                "{ctx}"
            );
            for (g, jg) in b.joints.groups.iter().enumerate() {
                let rows = usize::from(jg.lods[l]);
                assert_eq!(
                    jg.output_indices[..rows],
                    u16s(&j["jointGroupOutputIndices"][g][c][l])[..],
                    "{ctx} group {g}"
                );
                assert_eq!(
                    jg.values[..rows * jg.input_indices.len()],
                    f32s(&j["jointGroupValues"][g][c][l])[..],
                    "{ctx} group {g}"
                );
            }
            let n = usize::from(b.blend_shapes.lods[l]);
            assert_eq!(
                b.blend_shapes.input_indices[..n],
                u16s(&j["blendShapeInputIndices"][c][l])[..]
            );
            assert_eq!(
                b.blend_shapes.output_indices[..n],
                u16s(&j["blendShapeOutputIndices"][c][l])[..]
            );
            let n = usize::from(b.animated_maps.lods[l]);
            let am = &b.animated_maps.conditionals;
            assert_eq!(
                am.input_indices[..n],
                u16s(&j["conditionalInputIndices"][c][l])[..]
            );
            assert_eq!(
                am.output_indices[..n],
                u16s(&j["conditionalOutputIndices"][c][l])[..]
            );
            assert_eq!(
                am.from_values[..n],
                f32s(&j["conditionalFromValues"][c][l])[..]
            );
            assert_eq!(am.to_values[..n], f32s(&j["conditionalToValues"][c][l])[..]);
            assert_eq!(
                am.slope_values[..n],
                f32s(&j["conditionalSlopeValues"][c][l])[..]
            );
            assert_eq!(
                am.cut_values[..n],
                f32s(&j["conditionalCutValues"][c][l])[..]
            );
        }

        assert_eq!(
            d.meshes.len() as u64,
            j["meshCount"][c].as_u64().unwrap(),
            "{ctx}"
        );
        for (m, mesh) in d.meshes.iter().enumerate() {
            let ctx = format!("config {c} mesh {m}");
            assert_eq!(mesh.positions, v3s(&j["vertexPositions"][c][m]), "{ctx}");
            let uv: Vec<[f32; 2]> = j["vertexTextureCoordinates"][c][m]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    let f = f32s(x);
                    [f[0], f[1]]
                })
                .collect();
            assert_eq!(mesh.uvs, uv, "{ctx}");
            assert_eq!(mesh.normals, v3s(&j["vertexNormals"][c][m]), "{ctx}");
            let lay: Vec<Vec<u32>> = mesh
                .layouts
                .iter()
                .map(|l| vec![l.position, l.uv, l.normal])
                .collect();
            let want: Vec<Vec<u32>> = j["vertexLayouts"][c][m]
                .as_array()
                .unwrap()
                .iter()
                .map(u32s)
                .collect();
            assert_eq!(lay, want, "{ctx}");
            let faces: Vec<Vec<u32>> = (0..mesh.faces.len())
                .map(|f| mesh.faces.face(f).to_vec())
                .collect();
            let want: Vec<Vec<u32>> = j["faces"][c][m]
                .as_array()
                .unwrap()
                .iter()
                .map(u32s)
                .collect();
            assert_eq!(faces, want, "{ctx}");
            assert_eq!(
                u64::from(mesh.max_influences),
                j["maxInfluencePerVertex"][c][m].as_u64().unwrap()
            );
            let sw = j["skinWeightsValues"][c][m].as_array().unwrap();
            assert_eq!(mesh.skin.len(), sw.len(), "{ctx}");
            for v in 0..mesh.skin.len() {
                let (w, jt) = mesh.skin.vertex(v);
                assert_eq!(w, &f32s(&sw[v])[..], "{ctx} vertex {v}");
                assert_eq!(
                    jt,
                    &u16s(&j["skinWeightsJointIndices"][c][m][v])[..],
                    "{ctx} vertex {v}"
                );
            }
            let chans: Vec<u16> = mesh.blend_shape_targets.iter().map(|t| t.channel).collect();
            assert_eq!(
                chans,
                u16s(&j["correctiveBlendShapeIndices"][c][m]),
                "{ctx}"
            );
            for (t, tg) in mesh.blend_shape_targets.iter().enumerate() {
                assert_eq!(tg.deltas, v3s(&j["correctiveBlendShapeDeltas"][c][m][t]));
                assert_eq!(
                    tg.vertex_indices,
                    u32s(&j["correctiveBlendShapeVertexIndices"][c][m][t])
                );
            }
        }
        check_extensions(d, j, c);
    }
}

/// The later layers' values of a decoded fixture JSON, when it has them.
fn check_extensions(d: &Dna, j: &Value, c: usize) {
    let x = &d.extensions;
    if j.get("mlControlNames").is_some() {
        let ml = &x.machine_learned;
        assert_eq!(ml.ml_control_names, strs(&j["mlControlNames"]));
        let nets = u16s(&j["neuralNetworkIndicesPerLOD"][c]);
        assert_eq!(ml.neural_networks.len(), nets.len());
        let rn: Vec<Vec<String>> = j["regionNames"][c]
            .as_array()
            .unwrap()
            .iter()
            .map(strs)
            .collect();
        assert_eq!(ml.region_names, rn);
        let ri: Vec<Vec<Vec<u16>>> = j["neuralNetworkIndicesPerMeshRegion"][c]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_array().unwrap().iter().map(u16s).collect())
            .collect();
        assert_eq!(ml.region_networks, ri);
        for (n, net) in ml.neural_networks.iter().enumerate() {
            assert_eq!(
                net.input_indices,
                u16s(&j["neuralNetworkInputIndices"][c][n])
            );
            assert_eq!(
                net.output_indices,
                u16s(&j["neuralNetworkOutputIndices"][c][n])
            );
            assert_eq!(
                net.layers.len() as u64,
                j["neuralNetworkLayerCount"][c][n].as_u64().unwrap()
            );
            for (l, layer) in net.layers.iter().enumerate() {
                assert_eq!(
                    u64::from(layer.activation.function_id),
                    j["neuralNetworkActivationFunction"][c][n][l]
                        .as_u64()
                        .unwrap()
                );
                assert_eq!(
                    layer.activation.parameters,
                    f32s(&j["neuralNetworkActivationFunctionParameters"][c][n][l])
                );
                assert_eq!(layer.biases, f32s(&j["neuralNetworkBiases"][c][n][l]));
                assert_eq!(layer.weights, f32s(&j["neuralNetworkWeights"][c][n][l]));
            }
        }
    }
    if j.get("poseControlNames").is_some() {
        let e = &x.rbf_ext;
        assert_eq!(e.pose_control_names, strs(&j["poseControlNames"]));
        for (p, pose) in e.poses.iter().enumerate() {
            assert_eq!(
                pose.input_control_indices,
                u16s(&j["poseInputControlIndices"][p])
            );
            assert_eq!(
                pose.output_control_indices,
                u16s(&j["poseOutputControlIndices"][p])
            );
            assert_eq!(
                pose.output_control_weights,
                f32s(&j["poseOutputControlWeights"][p])
            );
        }
    }
    if j.get("jointTranslationRepresentation").is_some() {
        let reps = &x.joint_metadata.joint_representations;
        for lod in 0..d.descriptor.lod_count {
            for &ji in d.definition.joint_indices_for_lod(lod) {
                let i = usize::from(ji);
                let r = reps[i];
                let s = |k: &str| code(j[k][c][i].as_str().unwrap());
                assert_eq!(r.translation, s("jointTranslationRepresentation"));
                assert_eq!(r.rotation, s("jointRotationRepresentation"));
                assert_eq!(r.scale, s("jointScaleRepresentation"));
            }
        }
        let ts = &x.twist_swing;
        for (setups, p) in [(&ts.twists, "twist"), (&ts.swings, "swing")] {
            let w = j[format!("{p}BlendWeights")][c].as_array().unwrap();
            assert_eq!(setups.len(), w.len(), "config {c} {p}s");
            for (k, s) in setups.iter().enumerate() {
                assert_eq!(s.blend_weights, f32s(&w[k]));
                assert_eq!(
                    s.output_joint_indices,
                    u16s(&j[format!("{p}OutputJointIndices")][c][k])
                );
                assert_eq!(
                    s.input_control_indices,
                    u16s(&j[format!("{p}InputControlIndices")][c][k])
                );
                assert_eq!(
                    s.twist_axis,
                    code(j[format!("{p}TwistAxes")][c][k].as_str().unwrap())
                );
            }
        }
    }
    if j.get("mlOperationTypes").is_some() {
        let types = &x.machine_learned_ext.types;
        let jt = j["mlOperationTypes"][c].as_array().unwrap();
        assert_eq!(types.len(), jt.len());
        for (t, ty) in types.iter().enumerate() {
            assert_eq!(ty.operations.len(), jt[t].as_array().unwrap().len());
            for (s, set) in ty.operations.iter().enumerate() {
                let ops = jt[t][s].as_array().unwrap();
                assert_eq!(set.len(), ops.len(), "config {c} type {t} set {s}");
                for (o, op) in set.iter().enumerate() {
                    assert_eq!(op.operation_type, code(ops[o].as_str().unwrap()));
                    assert_eq!(op.parameters, u32s(&j["mlOperationParameters"][c][t][s][o]));
                    assert_eq!(
                        op.set_dependencies,
                        u16s(&j["mlDependencyOperationSetIndices"][c][t][s][o])
                    );
                    assert_eq!(
                        op.operation_dependencies,
                        u16s(&j["mlDependencyOperationIndices"][c][t][s][o])
                    );
                }
                for lod in 0..2u16 {
                    assert_eq!(
                        ty.lod_operations[s].indices_for_lod(lod),
                        &u16s(&j["mlOperationIndicesPerLOD"][c][t][s][usize::from(lod)])[..],
                        "config {c} type {t} set {s} LOD {lod}"
                    );
                }
            }
        }
        let mj = &x.machine_learned_ext.joints;
        assert!(mj.input_indices.is_empty() && mj.output_indices.is_empty());
        assert!(mj.parameter_keys.is_empty() && mj.parameter_values.is_empty());
    }
}

fn decoded(version: u8) -> Option<([Dna; 3], Value)> {
    let b = bytes(&format!("openriglogic_fixture_v2{version}.dna"))?;
    let j = json(&format!("openriglogic_fixture_v2{version}.decoded.json"))?;
    Some((configs().map(|s| load(&b, s)), j))
}

#[test]
fn fixture_v21_equals_its_decoded_json() {
    let Some((d, j)) = decoded(1) else { return };
    assert_eq!(d[0].version.version, 1);
    check_decoded(&d, &j);
}

#[test]
fn fixture_v23_equals_its_decoded_json() {
    let Some((d, j)) = decoded(3) else { return };
    check_decoded(&d, &j);
}

#[test]
fn fixture_v28_equals_its_decoded_json() {
    let Some((d, j)) = decoded(8) else { return };
    check_decoded(&d, &j);
}

/// The decoded data of `Fixtures*.cpp` grows by version: 2.2 is 2.1's (plus two unknown sections
/// the reader skips).
#[test]
fn fixture_v22_equals_the_v21_values_and_skips_unknown_sections() {
    let (Some(b), Some(j)) = (
        bytes("openriglogic_fixture_v22.dna"),
        json("openriglogic_fixture_v21.decoded.json"),
    ) else {
        return;
    };
    let d = configs().map(|s| load(&b, s));
    check_decoded(&d, &j);
    let FileLayout::Indexed { sections } = &d[0].layout else {
        panic!("2.2 has an index table")
    };
    let ids: Vec<(&[u8], bool)> = sections.iter().map(|s| (&s.id[..], s.known)).collect();
    assert_eq!(
        ids,
        [
            (&b"desc"[..], true),
            (b"defn", true),
            (b"bhvr", true),
            (b"geom", true),
            (b"unk1", false),
            (b"unk2", false)
        ]
    );
}

/// 2.4–2.7 against the 2.8 values less what each version lacks (`Fixtures*.cpp`): 2.4 has no
/// `rbfe` (OpenRigLogic fills it in from the poses), 2.4–2.5 no `mlbe`, 2.4–2.6 no `dsce` (`xyz`,
/// positive signs, counter-clockwise), 2.7's `dsce` no winding (counter-clockwise).
#[test]
fn fixtures_v24_to_v27_equal_the_v28_values_less_their_missing_sections() {
    let Some(j28) = json("openriglogic_fixture_v28.decoded.json") else {
        return;
    };
    let expected_ids: [&[&str]; 4] = [
        &[
            "desc", "defn", "bhvr", "geom", "mlbh", "rbfb", "jbmd", "twsw",
        ],
        &[
            "desc", "defn", "bhvr", "geom", "mlbh", "rbfb", "rbfe", "jbmd", "twsw",
        ],
        &[
            "desc", "defn", "bhvr", "geom", "mlbh", "rbfb", "rbfe", "jbmd", "twsw", "mlbe",
        ],
        &[
            "desc", "defn", "bhvr", "geom", "mlbh", "rbfb", "rbfe", "jbmd", "twsw", "mlbe", "dsce",
        ],
    ];
    for v in 4u8..=7 {
        let Some(b) = bytes(&format!("openriglogic_fixture_v2{v}.dna")) else {
            return;
        };
        let d = configs().map(|s| load(&b, s));
        let mut j = j28.clone();
        let vals = j["values"].as_object_mut().unwrap();
        if v < 7 {
            for k in ["rotationSequence", "rotationSign", "faceWindingOrder"] {
                vals.remove(k);
            }
        } else {
            vals.insert("faceWindingOrder".into(), "ccw".into());
        }
        if v < 6 {
            for k in [
                "mlOperationTypes",
                "mlOperationParameters",
                "mlDependencyOperationSetIndices",
                "mlDependencyOperationIndices",
                "mlOperationIndicesPerLOD",
            ] {
                vals.remove(k);
            }
        }
        if v < 5 {
            for k in [
                "poseControlNames",
                "poseInputControlIndices",
                "poseOutputControlIndices",
            ] {
                vals.remove(k);
            }
        }
        check_decoded(&d, &j);
        for dna in &d {
            let de = &dna.descriptor;
            if v < 7 {
                assert_eq!(de.rotation_sequence, RotationSequence::Xyz);
                assert_eq!(de.rotation_sign, [RotationDirection::Positive; 3]);
            }
            assert_eq!(de.face_winding, FaceWinding::Ccw);
            assert_eq!(dna.extensions.machine_learned_ext.types.is_empty(), v < 6);
            check_rbf(dna);
        }
        if v == 4 {
            // DNA::postLoadActions: one control per pose, named after it, driving control
            // raw (9) + PSD (12) + ML (9) + pose.
            let e = &d[0].extensions.rbf_ext;
            let names: Vec<&str> = e.pose_control_names.iter().map(String::as_str).collect();
            assert_eq!(names, ["RA", "RB", "RC", "RD", "RE", "RF", "RG", "RH"]);
            for (p, pose) in e.poses.iter().enumerate() {
                assert!(pose.input_control_indices.is_empty());
                assert_eq!(pose.output_control_indices, [30 + p as u16]);
                assert_eq!(pose.output_control_weights, [1.0]);
            }
        }
        let FileLayout::Indexed { sections } = &d[0].layout else {
            panic!("2.{v} has an index table")
        };
        let ids: Vec<String> = sections
            .iter()
            .map(|s| String::from_utf8_lossy(&s.id).into_owned())
            .collect();
        assert_eq!(ids, expected_ids[usize::from(v - 4)], "2.{v}");
        assert!(sections.iter().all(|s| s.known));
    }
}

/// The RBF solvers and poses `Fixturesv24.cpp`–`Fixturesv28.cpp` state (not in the decoded
/// JSON): solvers per configuration, names, controls, poses, parameters.
fn check_rbf(d: &Dna) {
    let kept: &[usize] = match (&d.load.lods, d.descriptor.lod_count) {
        (LodSelection::All, _) => &[0, 1, 2],
        (LodSelection::MaxLod(1), _) => &[1, 2],
        _ => &[0, 1],
    };
    let r = &d.extensions.rbf;
    let names = ["RSA", "RSB", "RSC"];
    let controls: [&[u16]; 3] = [&[11, 12], &[3], &[22, 23]];
    let poses: [&[u16]; 3] = [&[0, 1, 2], &[3, 4], &[5, 6, 7]];
    let values: [&[f32]; 3] = [
        &[2.0, 0.0, 1.0, 1.0, 3.0, -3.0],
        &[0.0, 4.0],
        &[2.0, 0.0, 1.0, 1.0, 3.0, -3.0],
    ];
    let radius = [1.0, 2.0, 1.0];
    let (ty, dist, norm, func, twist) = ([0, 1, 0], [1, 3, 1], [0, 1, 0], [2, 2, 0], [0, 1, 0]);
    assert_eq!(r.solvers.len(), kept.len());
    for (s, &k) in r.solvers.iter().zip(kept) {
        assert_eq!(s.name, names[k]);
        assert_eq!(s.raw_control_indices, controls[k]);
        assert_eq!(s.pose_indices, poses[k]);
        assert_eq!(s.raw_control_values, values[k]);
        assert_eq!((s.radius, s.weight_threshold), (radius[k], radius[k]));
        assert_eq!(
            (s.solver_type, s.automatic_radius, s.distance_method),
            (ty[k], 0, dist[k])
        );
        assert_eq!(
            (s.normalize_method, s.function_type, s.twist_axis),
            (norm[k], func[k], twist[k])
        );
    }
    let pn: Vec<&str> = r.poses.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(pn, ["RA", "RB", "RC", "RD", "RE", "RF", "RG", "RH"]);
    let sc: Vec<f32> = r.poses.iter().map(|p| p.scale).collect();
    assert_eq!(sc, [0.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 0.5]);
}

#[test]
fn fixture_v28_rbf_solvers_follow_the_lod_selection() {
    let Some(b) = bytes("openriglogic_fixture_v28.dna") else {
        return;
    };
    for s in configs() {
        check_rbf(&load(&b, s));
    }
}

fn ict(name: &str) -> Option<Dna> {
    let b = bytes(name)?;
    Some(read_dna(&b, name, &DnaLoad::default()).unwrap())
}

fn n(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

/// Every `readerExpectations` value of `mien_ict_rig_outputs.json` (OpenRigLogic's reader on the
/// same file), the descriptor and section table the README states, and RigLogic's per-LOD index
/// lists (`lods[]`).
#[test]
fn ict_rig_matches_the_reader_expectations() {
    let (Some(d), Some(out)) = (ict("mien_ict_rig.dna"), json("mien_ict_rig_outputs.json")) else {
        return;
    };
    let r = &out["readerExpectations"];
    let (de, df, b) = (&d.descriptor, &d.definition, &d.behavior);
    assert_eq!((d.version.generation, d.version.version), (2, 8));
    assert_eq!(de.name, "mien_ict_rig");
    assert_eq!(
        (de.archetype, de.gender, de.age),
        (Archetype::Other, Gender::Other, 0)
    );
    assert_eq!(
        (de.complexity.as_str(), de.db_name.as_str()),
        ("mien-test", "mien_ict")
    );
    let keys: Vec<&str> = de.metadata.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["source", "generator", "purpose"]);
    assert_eq!(
        (de.translation_unit, de.rotation_unit),
        (TranslationUnit::Cm, RotationUnit::Degrees)
    );
    let cs = de.coordinate_system;
    assert_eq!(
        (cs.x, cs.y, cs.z),
        (Direction::Right, Direction::Up, Direction::Front)
    );
    assert_eq!(de.rotation_sequence, RotationSequence::Xyz);
    assert_eq!(de.rotation_sign, [RotationDirection::Positive; 3]);
    assert_eq!(de.face_winding, FaceWinding::Ccw);
    let FileLayout::Indexed { sections } = &d.layout else {
        panic!("2.8")
    };
    let ids: Vec<String> = sections
        .iter()
        .map(|s| String::from_utf8_lossy(&s.id).into_owned())
        .collect();
    assert_eq!(
        ids,
        [
            "desc", "defn", "bhvr", "geom", "mlbh", "rbfb", "rbfe", "jbmd", "twsw", "mlbe", "dsce"
        ]
    );
    let last = sections.last().unwrap();
    assert_eq!(
        (last.offset + last.size) as u64,
        out["dnaFiles"][0]["bytes"].as_u64().unwrap()
    );
    assert!(!d.extensions.any());

    assert_eq!(df.gui_control_names.len(), n(&r["guiControlCount"]));
    assert_eq!(df.raw_control_names.len(), n(&r["rawControlCount"]));
    assert_eq!(usize::from(b.psd_count), n(&r["psdCount"]));
    assert_eq!(df.joint_names.len(), n(&r["jointCount"]));
    assert_eq!(b.joints.groups.len(), n(&r["jointGroupCount"]));
    assert_eq!(usize::from(b.joints.row_count), n(&r["jointRowCount"]));
    assert_eq!(
        usize::from(b.joints.column_count),
        n(&r["jointColumnCount"])
    );
    assert_eq!(
        df.blend_shape_channel_names.len(),
        n(&r["blendShapeChannelCount"])
    );
    assert_eq!(df.animated_map_names.len(), n(&r["animatedMapCount"]));
    assert_eq!(df.mesh_names.len(), n(&r["meshCount"]));
    assert_eq!(d.meshes.len(), n(&r["meshCount"]));
    assert_eq!(usize::from(de.lod_count), n(&r["lodCount"]));
    assert_eq!(usize::from(de.db_max_lod), n(&r["dbMaxLOD"]));
    assert_eq!(b.gui_to_raw.len(), n(&r["guiToRawRowCount"]));
    assert_eq!(b.psds.rows.len(), n(&r["psdEntryCount"]));
    assert_eq!(
        b.animated_maps.conditionals.len(),
        n(&r["animatedMapRowCount"])
    );
    assert_eq!(
        df.mesh_blend_shape_channels.len(),
        n(&r["meshBlendShapeChannelMappingCount"])
    );
    assert_eq!(b.psds.rows, u16s(&r["psdRowIndices"]));
    assert_eq!(b.psds.columns, u16s(&r["psdColumnIndices"]));
    assert_eq!(b.psds.values, f32s(&r["psdValues"]));
    assert_eq!(df.joint_parents, u16s(&r["jointParentIndices"]));
    assert_eq!(
        df.neutral_joint_translations,
        v3s(&r["neutralJointTranslations"])
    );
    assert_eq!(df.neutral_joint_rotations, v3s(&r["neutralJointRotations"]));
    for (g, jg) in b.joints.groups.iter().enumerate() {
        let e = &r["jointGroups"][g];
        assert_eq!(jg.lods, u16s(&e["lods"]));
        assert_eq!(jg.joint_indices, u16s(&e["jointIndices"]));
        assert_eq!(jg.input_indices, u16s(&e["inputIndices"]));
        assert_eq!(jg.output_indices, u16s(&e["outputIndices"]));
        assert_eq!(jg.values.len(), n(&e["valueCount"]));
    }
    assert_eq!(b.blend_shapes.lods, u16s(&r["blendShapeChannelLODs"]));
    assert_eq!(
        b.blend_shapes.input_indices,
        u16s(&r["blendShapeChannelInputIndices"])
    );
    assert_eq!(
        b.blend_shapes.output_indices,
        u16s(&r["blendShapeChannelOutputIndices"])
    );
    assert_eq!(b.animated_maps.lods, u16s(&r["animatedMapLODs"]));
    for (mi, m) in d.meshes.iter().enumerate() {
        let e = &r["meshes"][mi];
        assert_eq!(df.mesh_names[mi], e["name"].as_str().unwrap());
        assert_eq!(m.positions.len(), n(&e["vertexCount"]));
        assert_eq!(m.uvs.len(), n(&e["uvCount"]));
        assert_eq!(m.normals.len(), n(&e["normalCount"]));
        assert_eq!(m.layouts.len(), n(&e["layoutCount"]));
        assert_eq!(m.faces.len(), n(&e["faceCount"]));
        assert_eq!(m.skin.len(), n(&e["skinnedVertexCount"]));
        assert_eq!(
            usize::from(m.max_influences),
            n(&e["maxInfluencePerVertex"])
        );
        assert_eq!(m.blend_shape_targets.len(), n(&e["blendShapeTargetCount"]));
        let total: usize = m.blend_shape_targets.iter().map(|t| t.deltas.len()).sum();
        assert_eq!(total, n(&e["totalDeltaCount"]));
        assert_eq!(
            m.positions[0],
            v3s(&Value::Array(vec![e["position0"].clone()]))[0]
        );
        assert_eq!(
            m.normals[0],
            v3s(&Value::Array(vec![e["normal0"].clone()]))[0]
        );
        assert_eq!(m.uvs[0][..], f32s(&e["uv0"])[..]);
        assert_eq!(m.faces.face(0), &u32s(&e["face0LayoutIndices"])[..]);
        let l = m.layouts[0];
        assert_eq!(vec![l.position, l.uv, l.normal], u32s(&e["layout0"]));
        let (w, jt) = m.skin.vertex(n(&e["skinVertex"]));
        assert_eq!(jt, &u16s(&e["skinVertexJoints"])[..]);
        assert_eq!(w, &f32s(&e["skinVertexWeights"])[..]);
        let ch: Vec<u16> = m.blend_shape_targets.iter().map(|t| t.channel).collect();
        assert_eq!(ch, u16s(&e["targetChannels"]));
        let dc: Vec<u16> = m
            .blend_shape_targets
            .iter()
            .map(|t| t.deltas.len() as u16)
            .collect();
        let want: Vec<u16> = u32s(&e["targetDeltaCounts"])
            .iter()
            .map(|&x| x as u16)
            .collect();
        assert_eq!(dc, want);
        let t0 = &m.blend_shape_targets[0];
        assert_eq!(
            t0.vertex_indices[..3],
            u32s(&e["target0FirstVertexIndices"])[..]
        );
        assert_eq!(t0.deltas[..3], v3s(&e["target0FirstDeltas"])[..]);
    }
    for l in out["lods"].as_array().unwrap() {
        let lod = n(&l["lod"]) as u16;
        assert_eq!(df.joint_indices_for_lod(lod), &u16s(&l["jointIndices"])[..]);
        // RigLogic's lists are the behaviour's outputs at the LOD (in entry order, repeats kept);
        // the definition's lists hold the same elements.
        let bs = &b.blend_shapes;
        let rows = usize::from(bs.lods[usize::from(lod)]);
        let want = u16s(&l["blendShapeChannelIndices"]);
        assert_eq!(bs.output_indices[..rows], want[..]);
        let set = |v: &[u16]| {
            v.iter()
                .copied()
                .collect::<std::collections::BTreeSet<u16>>()
        };
        assert_eq!(set(df.blend_shape_channel_indices_for_lod(lod)), set(&want));
        let am = &b.animated_maps;
        let rows = usize::from(am.lods[usize::from(lod)]);
        let want = u16s(&l["animatedMapIndices"]);
        assert_eq!(am.conditionals.output_indices[..rows], want[..]);
        assert_eq!(set(df.animated_map_indices_for_lod(lod)), set(&want));
        assert_eq!(
            d.joint_variable_attribute_indices(lod),
            u16s(&l["jointVariableAttributeIndicesEuler"])
        );
    }
    d.validate().unwrap();
}

/// The 2.1 and 2.8 files hold the same rig: every layer decodes equal.
#[test]
fn ict_rig_v21_and_v28_decode_to_equal_content() {
    let (Some(a), Some(b)) = (ict("mien_ict_rig.dna"), ict("mien_ict_rig_v21.dna")) else {
        return;
    };
    assert_eq!(b.version.version, 1);
    assert!(matches!(b.layout, FileLayout::V21 { .. }));
    assert_eq!(a.descriptor, b.descriptor);
    assert_eq!(a.definition, b.definition);
    assert_eq!(a.behavior, b.behavior);
    assert_eq!(a.meshes, b.meshes);
    assert_eq!(a.extensions, b.extensions);
    b.validate().unwrap();
}

/// Validation: clean for the ICT rig; the upstream fixtures' PSD rows overlap their raw controls
/// (rows 8 … with 9 raw controls), which must be named.
#[test]
fn fixtures_fail_validation_with_the_psd_overlap_named() {
    for v in 1u8..=8 {
        let Some(b) = bytes(&format!("openriglogic_fixture_v2{v}.dna")) else {
            return;
        };
        let d = load(&b, LodSelection::All);
        let e = d.validate().unwrap_err();
        let mien_core::Error::Many(list) = &e else {
            panic!("2.{v}: expected a list of problems, got {e}")
        };
        let overlap = list.iter().any(|p| {
            matches!(p, mien_core::Error::Format { field, index: Some(0), reason, .. }
                if field == "behavior.controls.psds.rows" && reason.contains("PSD row 8 overlaps the raw controls"))
        });
        assert!(overlap, "2.{v}: {e}");
    }
}

/// Conversion: the ICT rig at LOD 0 and 1 as a mien character. The neutral joints composed in
/// metres and radians land on the world bind positions the README lists (cm ÷ 100); every
/// vertex is a layout; target deltas reach every layout of their position; skins sum to 1.
#[test]
fn ict_rig_converts_to_a_character_in_metres() {
    let Some(d) = ict("mien_ict_rig.dna") else {
        return;
    };
    let bind: [(&str, [f32; 3]); 6] = [
        ("spine_04", [0.0, -27.0, -3.5]),
        ("head", [0.0, -5.0, -1.0]),
        ("FACIAL_C_Jaw", [0.0, -1.8, 3.2]),
        ("FACIAL_L_Eye", [3.1951, 3.6158, 8.4411]),
        ("FACIAL_C_LipLower", [0.0, -4.2, 10.9]),
        ("FACIAL_R_BrowInner", [-1.45, 5.8, 10.2]),
    ];
    for lod in 0..2u16 {
        let ch = convert::to_character(&d, lod).unwrap();
        let pose = ch.rest_pose();
        let (mut l, mut w) = (Vec::new(), Vec::new());
        ch.world_matrices(&pose, &mut l, &mut w);
        for (name, p) in bind {
            let j = d
                .definition
                .joint_names
                .iter()
                .position(|n| n == name)
                .unwrap();
            let got = w[j].w_axis.truncate().to_array();
            for k in 0..3 {
                assert!(
                    (got[k] - p[k] / 100.0).abs() < 2e-6,
                    "{name}: {got:?} vs {p:?} cm"
                );
            }
        }
        let mesh_index = usize::from(d.definition.mesh_indices_for_lod(lod)[0]);
        let dm = &d.meshes[mesh_index];
        let mesh = &ch.meshes[0];
        let prim = &mesh.primitives[0];
        assert_eq!(prim.vertex_count(), dm.layouts.len());
        assert_eq!(mesh.target_count(), dm.blend_shape_targets.len());
        let p0 = dm.positions[dm.layouts[0].position as usize];
        assert_eq!(prim.positions[0], p0.map(|x| x * 0.01));
        let faces_tris: usize = (0..dm.faces.len())
            .map(|f| dm.faces.face(f).len() - 2)
            .sum();
        assert_eq!(prim.indices.len(), 3 * faces_tris);
        let inf = prim.influences.as_ref().unwrap();
        for wt in &inf.weights {
            assert!((wt.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // Each stored delta appears once per layout of its position, scaled to metres.
        let per_position = |p: u32| dm.layouts.iter().filter(|l| l.position == p).count();
        let expected: usize = dm
            .blend_shape_targets
            .iter()
            .flat_map(|t| t.vertex_indices.iter().zip(&t.deltas))
            .filter(|(_, d)| **d != [0.0; 3])
            .map(|(&p, _)| per_position(p))
            .sum();
        assert_eq!(prim.morph.entry_count(), expected);
        let t0 = &dm.blend_shape_targets[0];
        let v = dm
            .layouts
            .iter()
            .position(|l| l.position == t0.vertex_indices[0])
            .unwrap();
        let row =
            prim.morph.vertex_offsets()[v] as usize..prim.morph.vertex_offsets()[v + 1] as usize;
        let e = row
            .clone()
            .find(|&e| prim.morph.entry_target()[e] == 0)
            .unwrap();
        assert_eq!(
            prim.morph.entry_position()[e],
            t0.deltas[0].map(|x| x * 0.01)
        );
        assert_eq!(
            mesh.target_names[0],
            d.definition.blend_shape_channel_names[usize::from(t0.channel)]
        );
        mien_core::rig::RigData::from_character(&ch).unwrap();
    }
}

/// Axis maps: mien's own axes pass unchanged; a permutation turns vectors and rotations alike;
/// mirrored and degenerate systems are refused; units scale.
#[test]
fn axis_maps_and_units() {
    use mien_core::io::dna::CoordinateSystem;
    let cs = |x, y, z| CoordinateSystem { x, y, z };
    let id = convert::AxisMap::new(cs(Direction::Right, Direction::Up, Direction::Front)).unwrap();
    assert_eq!(id.apply([1.0, 2.0, 3.0]), [1.0, 2.0, 3.0]);
    // Z up, front = −Y of the file: x right, y back, z up is right-handed here.
    let zup = convert::AxisMap::new(cs(Direction::Right, Direction::Back, Direction::Up)).unwrap();
    assert_eq!(zup.apply([1.0, 2.0, 3.0]), [1.0, 3.0, -2.0]);
    for bad in [
        cs(Direction::Left, Direction::Up, Direction::Front),
        cs(Direction::Right, Direction::Right, Direction::Front),
        cs(Direction::Right, Direction::Left, Direction::Up),
        cs(Direction::Code(9), Direction::Up, Direction::Front),
    ] {
        assert!(convert::AxisMap::new(bad).is_err(), "{bad:?}");
    }
    let mut de = mien_core::io::dna::Descriptor {
        coordinate_system: cs(Direction::Right, Direction::Back, Direction::Up),
        ..Default::default()
    };
    let u = convert::Units::new(&de).unwrap();
    assert_eq!(u.position([100.0, 0.0, 50.0]), [1.0, 0.5, 0.0]);
    // A rotation of 90° about the file's z (mien's y) turns mien's x towards −z.
    let q = u.rotation([0.0, 0.0, 90.0]);
    let v = q * glam::Vec3::X;
    assert!((v - glam::Vec3::NEG_Z).length() < 1e-6, "{v}");
    // xyz order: x first. Rx(90°) then Rz(90°) sends y → z → z (unchanged by Rz), x → y.
    de.coordinate_system = cs(Direction::Right, Direction::Up, Direction::Front);
    let u = convert::Units::new(&de).unwrap();
    let q = u.rotation([90.0, 0.0, 90.0]);
    assert!((q * glam::Vec3::Y - glam::Vec3::Z).length() < 1e-6);
    assert!((q * glam::Vec3::X - glam::Vec3::Y).length() < 1e-6);
    de.rotation_sign = [
        RotationDirection::Negative,
        RotationDirection::Positive,
        RotationDirection::Positive,
    ];
    let q = convert::Units::new(&de).unwrap().rotation([90.0, 0.0, 0.0]);
    assert!((q * glam::Vec3::Y - glam::Vec3::NEG_Z).length() < 1e-6);
    de.translation_unit = TranslationUnit::Code(7);
    assert!(convert::Units::new(&de).is_err());
}

/// Every prefix of a fixture is refused (never a panic, never a decode of a cut file), for 2.1
/// and 2.8.
#[test]
fn every_truncation_is_refused() {
    for v in [1u8, 8] {
        let Some(b) = bytes(&format!("openriglogic_fixture_v2{v}.dna")) else {
            return;
        };
        for len in 0..b.len() {
            let r = read_dna(&b[..len], "cut", &DnaLoad::default());
            assert!(r.is_err(), "2.{v}: a {len}-byte prefix decoded");
        }
    }
}

/// Every single-bit flip of the 2.8 and 2.1 fixtures: read (all LODs and LOD 1 only), validate,
/// convert when valid — never a panic.
#[test]
fn bit_flip_sweep_never_panics() {
    for v in [1u8, 8] {
        let Some(b) = bytes(&format!("openriglogic_fixture_v2{v}.dna")) else {
            return;
        };
        let mut m = b.clone();
        for i in 0..b.len() {
            for bit in 0..8 {
                m[i] ^= 1 << bit;
                for lods in [LodSelection::All, LodSelection::MaxLod(1)] {
                    let opts = DnaLoad {
                        layers: DnaLayers::All,
                        lods,
                    };
                    if let Ok(d) = read_dna(&m, "flip", &opts)
                        && d.validate().is_ok()
                    {
                        let _ = convert::to_character(&d, 0);
                    }
                }
                m[i] ^= 1 << bit;
            }
        }
    }
}

thread_local! {
    static LARGEST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The system allocator, remembering the largest single allocation of each thread.
struct Counting;

// SAFETY: forwards every call to the system allocator unchanged; only records sizes.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        let _ = LARGEST.try_with(|m| m.set(m.get().max(l.size())));
        // SAFETY: the caller's contract for `alloc` holds for the system allocator.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        // SAFETY: `p` came from `alloc` above with layout `l`.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A length field of `0xFFFFFFFF` (the descriptor's name, the first definition list, a joint
/// group's values, the index table) is refused before anything that large is allocated.
#[test]
fn a_huge_length_is_refused_without_allocating() {
    let (Some(v21), Some(v28)) = (
        bytes("openriglogic_fixture_v21.dna"),
        bytes("openriglogic_fixture_v28.dna"),
    ) else {
        return;
    };
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut set = |name, b: &[u8], at: usize| {
        let mut m = b.to_vec();
        m[at..at + 4].copy_from_slice(&[0xFF; 4]);
        cases.push((name, m));
    };
    set("2.1 descriptor name", &v21, 0x27);
    set("2.1 first definition list", &v21, 0x7E);
    set("2.8 index table", &v28, 7);
    let off = u32::from_be_bytes(
        v28[0x0b + 16 * 2 + 8..0x0b + 16 * 2 + 12]
            .try_into()
            .unwrap(),
    );
    set("2.8 behaviour: GUI → raw inputs", &v28, off as usize + 2);
    for (name, m) in cases {
        LARGEST.with(|c| c.set(0));
        let e = read_dna(&m, "huge", &DnaLoad::default()).unwrap_err();
        let largest = LARGEST.with(|c| c.get());
        assert!(largest < 64 << 10, "{name}: allocated {largest} bytes");
        assert!(
            e.to_string().contains("length prefix 4294967295"),
            "{name}: {e}"
        );
    }
}

/// OpenRigLogic's `TestMalformedInput.cpp` cases, each refused with the field named.
#[test]
fn malformed_inputs_of_openriglogic_are_refused() {
    let Some(v21) = bytes("openriglogic_fixture_v21.dna") else {
        return;
    };
    let refused = |b: &[u8], field: &str| {
        let e = read_dna(b, "bad", &DnaLoad::default()).unwrap_err();
        assert!(e.to_string().contains(field), "expected {field}: {e}");
    };
    let mut m = v21.clone();
    m[..3].copy_from_slice(&[0, 0, 0]);
    refused(&m, "signature");
    let mut m = v21.clone();
    m[3..5].copy_from_slice(&[0, 99]);
    refused(&m, "version");
    refused(&[b'D', b'N', b'A', 0, 99, 0, 1, 0, 0, 0, 0], "version");
    refused(
        &[b'D', b'N', b'A', 0, 2, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF],
        "index",
    );
    let mut entry = vec![b'D', b'N', b'A', 0, 2, 0, 2, 0, 0, 0, 1];
    entry.extend_from_slice(&[
        0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 0, 0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 4,
    ]);
    refused(&entry, "index[0]");
    let mut m = v21.clone();
    m[0x27 + 68..0x27 + 70].copy_from_slice(&[1, 0]);
    refused(&m, "descriptor.lodCount");
    let mut payload = vec![0, 0, 0, 4, b'A', b'A', b'A', b'A'];
    while payload.len() < 256 {
        payload.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]);
    }
    let mut m = v21[..39].to_vec();
    m.extend_from_slice(&payload);
    m.extend_from_slice(&v21[39..]);
    refused(&m, "descriptor");
    let mut m = v21[..0x7E].to_vec();
    m.extend(std::iter::repeat_n([0xDE, 0xAD, 0xBE, 0xEF], 64).flatten());
    m.extend_from_slice(&v21[0x7E..]);
    refused(&m, "definition");
    refused(&[], "signature");
    refused(&v21[..7], "sections");
    let mut m = v21.clone();
    let n = m.len();
    m[n - 3..].copy_from_slice(b"ANX");
    refused(&m, "footer");
}

/// Layer selection: a descriptor-only load reads nothing else; geometry without blend shapes
/// drops the targets only.
#[test]
fn layer_selection_loads_only_what_is_asked() {
    let Some(b) = bytes("openriglogic_fixture_v28.dna") else {
        return;
    };
    let with = |layers| {
        read_dna(
            &b,
            "f",
            &DnaLoad {
                layers,
                lods: LodSelection::All,
            },
        )
        .unwrap()
    };
    let all = with(DnaLayers::All);
    let d = with(DnaLayers::Descriptor);
    assert_eq!(d.descriptor, all.descriptor);
    assert!(d.definition.joint_names.is_empty() && d.meshes.is_empty() && !d.extensions.any());
    let g = with(DnaLayers::GeometryWithoutBlendShapes);
    assert_eq!(g.definition, all.definition);
    assert_eq!(g.behavior, Default::default());
    assert_eq!(g.meshes.len(), all.meshes.len());
    assert!(g.meshes.iter().all(|m| m.blend_shape_targets.is_empty()));
    assert_eq!(g.meshes[0].skin, all.meshes[0].skin);
    let bh = with(DnaLayers::Behavior);
    assert_eq!(bh.behavior, all.behavior);
    assert!(bh.meshes.is_empty());
    let r = with(DnaLayers::RbfBehavior);
    assert_eq!(r.extensions.rbf, all.extensions.rbf);
    assert!(r.extensions.machine_learned.neural_networks.is_empty());
}

fn selection() -> impl proptest::strategy::Strategy<Value = LodSelection> {
    use proptest::prelude::*;
    prop_oneof![
        Just(LodSelection::All),
        (0u16..4).prop_map(LodSelection::MaxLod),
        (0u16..3, 0u16..3).prop_map(|(a, b)| LodSelection::Range {
            max: a.min(b),
            min: a.max(b)
        }),
        proptest::collection::vec(0u16..4, 0..4).prop_map(LodSelection::List),
    ]
}

proptest::proptest! {
    #![proptest_config(support::proptest_config(64))]

    /// Any LOD selection of a fixture either names no LOD (refused) or keeps, for each kept LOD,
    /// exactly the file's elements of that LOD (by name), the file's rows of that LOD (joint
    /// outputs renumbered consistently through `LodFilter::joints`), and skin joints among the
    /// kept ones.
    #[test]
    fn lod_filtering_keeps_consistent_subsets(sel in selection(), v in proptest::sample::select(vec![1u8, 8])) {
        let Some(b) = bytes(&format!("openriglogic_fixture_v2{v}.dna")) else { return Ok(()) };
        let all = load(&b, LodSelection::All);
        let opts = DnaLoad { layers: DnaLayers::All, lods: sel.clone() };
        let d = match read_dna(&b, "f", &opts) {
            Ok(d) => d,
            Err(e) => {
                proptest::prop_assert!(matches!(e, mien_core::Error::Invalid { .. }), "{e}");
                return Ok(());
            }
        };
        let kept = d.lod_filter.as_ref().map_or_else(|| vec![0, 1], |f| f.lods.clone());
        proptest::prop_assert_eq!(usize::from(d.descriptor.lod_count), kept.len());
        let (df, af) = (&d.definition, &all.definition);
        for (i, &file_lod) in kept.iter().enumerate() {
            let i = i as u16;
            proptest::prop_assert_eq!(
                names(&df.joint_names, df.joint_indices_for_lod(i)),
                names(&af.joint_names, af.joint_indices_for_lod(file_lod))
            );
            proptest::prop_assert_eq!(
                names(&df.blend_shape_channel_names, df.blend_shape_channel_indices_for_lod(i)),
                names(&af.blend_shape_channel_names, af.blend_shape_channel_indices_for_lod(file_lod))
            );
            proptest::prop_assert_eq!(
                names(&df.mesh_names, df.mesh_indices_for_lod(i)),
                names(&af.mesh_names, af.mesh_indices_for_lod(file_lod))
            );
            for (g, jg) in d.behavior.joints.groups.iter().enumerate() {
                let fg = &all.behavior.joints.groups[g];
                let rows = fg.lods[usize::from(file_lod)];
                proptest::prop_assert_eq!(jg.lods[usize::from(i)], rows);
                for r in 0..usize::from(rows) {
                    let o = jg.output_indices[r];
                    let file_joint = match &d.lod_filter {
                        Some(f) => f.joints[usize::from(o / 9)],
                        None => o / 9,
                    };
                    proptest::prop_assert_eq!(file_joint * 9 + o % 9, fg.output_indices[r]);
                }
            }
        }
        for m in &d.meshes {
            for v in 0..m.skin.len() {
                for &j in m.skin.vertex(v).1 {
                    proptest::prop_assert!(usize::from(j) < df.joint_names.len());
                }
            }
        }
    }
}

/// `read_dna_file` reads a path (and names a missing one).
#[test]
fn read_dna_file_reads_a_path() {
    let p = dir().join("openriglogic_fixture_v28.dna");
    if !p.exists() {
        return;
    }
    let d = mien_core::io::dna::read_dna_file(&p, &DnaLoad::default()).unwrap();
    assert_eq!(d.version.version, 8);
    assert!(d.file.ends_with("openriglogic_fixture_v28.dna"));
    let e = mien_core::io::dna::read_dna_file(&dir().join("missing.dna"), &DnaLoad::default());
    assert!(matches!(e, Err(mien_core::Error::Io { .. })));
}
