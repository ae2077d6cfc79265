#version 330 core
// Two triangles covering the viewport (no vertex buffer: corners from gl_VertexID, 0..5); uv
// spans the source texture exactly over the viewport. A quad rather than one large triangle:
// llvmpipe recognises two triangles forming a rectangle and fills it by its linear rasteriser
// (with a BGRA source texture, see studio/viewport.py), several times faster for this copy.

out vec2 v_uv;

void main() {
    int corner = gl_VertexID < 3 ? gl_VertexID : 6 - gl_VertexID;   // 0 1 2, 3 2 1
    vec2 p = vec2(float(corner & 1), float(corner >> 1));
    v_uv = p;
    gl_Position = vec4(2.0 * p - 1.0, 0.0, 1.0);
}
