#version 330 core
// Depth-only pass from a light: the same instanced placement as mesh.vert.

in vec3 in_pos;
in float in_end;

in vec3 i_pos;
in vec3 i_row0;
in vec3 i_row1;
in vec3 i_row2;
in vec3 i_scale;

uniform mat4 u_light_viewproj;

void main() {
    mat3 rot = transpose(mat3(i_row0, i_row1, i_row2));
    vec3 p = in_end != 0.0 ? in_pos * i_scale.x + vec3(0.0, 0.0, in_end * i_scale.z) : in_pos * i_scale;
    vec3 world = i_pos + rot * p;
    gl_Position = u_light_viewproj * vec4(world, 1.0);
}
