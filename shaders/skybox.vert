#version 330 core
// One triangle covering the viewport at the far plane (depth 1): drawn after the opaque
// geoms, it shades only the pixels they left empty. The points of each pixel's ray on the near
// and far planes are linear in screen space in homogeneous coordinates, so they are computed
// here for the three corners and interpolated, not transformed per pixel.

uniform mat4 u_inv_viewproj;

out vec4 v_near;
out vec4 v_far;

void main() {
    vec2 p = vec2(float((gl_VertexID & 1) << 2), float((gl_VertexID & 2) << 1)) - 1.0;
    v_near = u_inv_viewproj * vec4(p, -1.0, 1.0);
    v_far = u_inv_viewproj * vec4(p, 1.0, 1.0);
    gl_Position = vec4(p, 1.0, 1.0);
}
