//! Vorticity (curl) at cell centres: `w = dv/dx - du/dy`, in 1/s, from the cell-centred
//! velocities (means of opposite faces) by central differences, one-sided at the walls.

use rayon::prelude::*;

kernel! {
/// Curl of row `j`. `u_dn`, `u_up` are the `u` rows below and above (the same row at a
/// wall); `v_*` the `v` face rows bounding rows `j`, `j - 1` and `j + 1`.
#[allow(clippy::too_many_arguments)]
fn curl_row(
    u_dn: &[f32],
    u_up: &[f32],
    dy_cells: f32,
    vb: &[f32],
    vt: &[f32],
    out: &mut [f32],
    inv_cell: f32,
) {
    let w = out.len();
    let (u_dn, u_up, vb, vt) = (&u_dn[..w + 1], &u_up[..w + 1], &vb[..w], &vt[..w]);
    let dudy_scale = if dy_cells > 0.0 { 0.5 / dy_cells } else { 0.0 };
    // Centre v of column i: mean of its bottom and top faces; centre u of a row: mean of the
    // left and right faces.
    let edge = |i: usize| -> f32 {
        let (il, ir) = (i.saturating_sub(1), (i + 1).min(w - 1));
        let dvdx = if ir > il {
            0.5 * ((vb[ir] + vt[ir]) - (vb[il] + vt[il])) / (ir - il) as f32
        } else {
            0.0
        };
        let dudy = ((u_up[i] + u_up[i + 1]) - (u_dn[i] + u_dn[i + 1])) * dudy_scale;
        (dvdx - dudy) * inv_cell
    };
    if w < 3 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = edge(i);
        }
        return;
    }
    out[0] = edge(0);
    out[w - 1] = edge(w - 1);
    for i in 1..w - 1 {
        let dvdx = 0.25 * ((vb[i + 1] + vt[i + 1]) - (vb[i - 1] + vt[i - 1]));
        let dudy = ((u_up[i] + u_up[i + 1]) - (u_dn[i] + u_dn[i + 1])) * dudy_scale;
        out[i] = (dvdx - dudy) * inv_cell;
    }
}
}

/// Write the curl of the MAC velocity of a `w x h` grid into `curl` (`w * h`, natural layout).
pub fn curl(u: &[f32], v: &[f32], w: usize, h: usize, curl: &mut [f32]) {
    let inv_cell = h as f32; // cell size = 1 / h canvas
    curl[..w * h]
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            let (jd, ju) = (j.saturating_sub(1), (j + 1).min(h - 1));
            let urow = |r: usize| &u[r * (w + 1)..(r + 1) * (w + 1)];
            curl_row(
                urow(jd),
                urow(ju),
                (ju - jd) as f32,
                &v[j * w..(j + 1) * w],
                &v[(j + 1) * w..(j + 2) * w],
                row,
                inv_cell,
            );
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solid_rotation_has_uniform_curl() {
        // u = -y, v = x (canvas units) is a rotation with curl 2 everywhere.
        let (w, h) = (6, 6);
        let hcell = 1.0 / h as f32;
        let mut u = vec![0.0; (w + 1) * h];
        let mut v = vec![0.0; w * (h + 1)];
        for j in 0..h {
            for i in 0..=w {
                u[j * (w + 1) + i] = -((j as f32 + 0.5) * hcell - 0.5);
            }
        }
        for j in 0..=h {
            for i in 0..w {
                v[j * w + i] = (i as f32 + 0.5) * hcell - 0.5;
            }
        }
        let mut c = vec![0.0; w * h];
        curl(&u, &v, w, h, &mut c);
        for x in c {
            assert!((x - 2.0).abs() < 1e-4, "{x}");
        }
    }
}
