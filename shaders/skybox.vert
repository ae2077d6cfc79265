#version 330 core
// One triangle covering the viewport at the far plane (depth 1): drawn after the opaque
// geoms, it shades only the pixels they left empty.

out vec2 v_ndc;

void main() {
    vec2 p = vec2(float((gl_VertexID & 1) << 2), float((gl_VertexID & 2) << 1)) - 1.0;
    v_ndc = p;
    gl_Position = vec4(p, 1.0, 1.0);
}
