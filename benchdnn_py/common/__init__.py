"""What the drivers share about a problem's numbers: attributes (post-ops, scales, zero
points), memory formats, deterministic fills, the eltwise formulas and the point-wise
compare against the reference."""
