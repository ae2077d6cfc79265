#version 330 core
// Instanced geom: a unit mesh placed by position, orientation rows (geom_xmat), and scale.

in vec3 in_pos;
in vec3 in_normal;

in vec3 i_pos;
in vec3 i_row0;
in vec3 i_row1;
in vec3 i_row2;
in vec3 i_scale;
in vec4 i_color;
in float i_checker;

uniform mat4 u_viewproj;
uniform mat4 u_light_viewproj;

out vec3 v_world;
out vec3 v_normal;
out vec2 v_local;
out vec4 v_color;
out float v_checker;
out vec4 v_light_clip;

void main() {
    vec3 p = in_pos * i_scale;
    mat3 rot = transpose(mat3(i_row0, i_row1, i_row2));   // rows of geom_xmat -> matrix
    v_world = i_pos + rot * p;
    // inverse-transpose of a diagonal scale is 1/scale
    v_normal = rot * (in_normal / i_scale);
    v_local = p.xy;
    v_color = i_color;
    v_checker = i_checker;
    v_light_clip = u_light_viewproj * vec4(v_world, 1.0);
    gl_Position = u_viewproj * vec4(v_world, 1.0);
}
