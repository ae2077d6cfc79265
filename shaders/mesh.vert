#version 330 core
// Instanced geom: a unit mesh placed by position, orientation rows (geom_xmat), and scale.
// Capsule vertices (in_end = +-1) are scaled by the radius i_scale.x and moved by +-i_scale.z along z.
// Whatever is linear across a triangle (shadow-map coordinates of the orthographic light, fog) is
// computed here rather than per pixel.

in vec3 in_pos;
in vec3 in_normal;
in float in_end;

in vec3 i_pos;
in vec3 i_row0;
in vec3 i_row1;
in vec3 i_row2;
in vec3 i_scale;
in vec4 i_color;
in float i_checker;

uniform mat4 u_viewproj;
uniform mat4 u_light_viewproj;   // orthographic: w = 1
uniform vec3 u_eye;
uniform float u_fog_start;
uniform float u_fog_end;

out vec3 v_normal;
out vec3 v_to_eye;
out vec3 v_checker;              // local x, y on the plane and the checker cell size (0: none)
out vec4 v_color;
out vec3 v_shadow;               // shadow-map texture coordinates and depth
out float v_fog;

void main() {
    vec3 p = in_pos * i_scale;
    vec3 n = in_normal / i_scale;        // inverse-transpose of a diagonal scale is 1/scale
    if (in_end != 0.0) {
        p = vec3(in_pos * i_scale.x) + vec3(0.0, 0.0, in_end * i_scale.z);
        n = in_normal;
    }
    mat3 rot = transpose(mat3(i_row0, i_row1, i_row2));   // rows of geom_xmat -> matrix
    vec3 world = i_pos + rot * p;
    v_normal = rot * n;
    v_to_eye = u_eye - world;
    v_checker = vec3(p.xy, i_checker);
    v_color = i_color;
    v_shadow = (u_light_viewproj * vec4(world, 1.0)).xyz * 0.5 + 0.5;
    v_fog = clamp((length(v_to_eye) - u_fog_start) / max(u_fog_end - u_fog_start, 1e-6), 0.0, 1.0);
    gl_Position = u_viewproj * vec4(world, 1.0);
}
