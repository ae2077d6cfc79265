#version 330 core
// Instanced geom: a unit mesh placed by position, orientation rows (geom_xmat) and scale.
// Capsule vertices (in_end = +-1) are scaled by the radius i_scale.x and moved by +-i_scale.z
// along z. The mirror pass (u_reflect: the reflection in a plane) draws the mirrored scene:
// lighting stays in the real world (the eye is mirrored instead), the clip distance removes
// what lies behind the mirror.

in vec3 in_pos;
in vec3 in_normal;
in float in_end;

in vec3 i_pos;
in vec3 i_row0;
in vec3 i_row1;
in vec3 i_row2;
in vec3 i_scale;
in vec4 i_color;
in vec4 i_material;      // emission, specular, shininess, reflectance
in vec4 i_texmap;        // repeat u, repeat v, uniform, mode (0 none, 1 2D, 2 cube)

uniform mat4 u_viewproj;
uniform mat4 u_reflect;          // identity, or the mirror's reflection
uniform vec4 u_clip_plane;       // world plane kept (>= 0); (0, 0, 0, 1) keeps everything
uniform mat4 u_shadow_vp[2];     // light view-projections of the shadow maps
uniform vec3 u_eye;

out vec3 v_world;
out vec3 v_normal;
out vec3 v_local;                // unscaled local position: cube textures, per-object 2D maps
out vec3 v_scaled;               // scaled local position: uniform 2D maps (world units)
out vec4 v_color;
flat out vec4 v_material;
flat out vec4 v_texmap;
out vec4 v_shadow0;
out vec4 v_shadow1;

void main() {
    vec3 p = in_pos * i_scale;
    vec3 n = in_normal / i_scale;        // inverse-transpose of a diagonal scale is 1/scale
    if (in_end != 0.0) {
        p = vec3(in_pos * i_scale.x) + vec3(0.0, 0.0, in_end * i_scale.z);
        n = in_normal;
    }
    mat3 rot = transpose(mat3(i_row0, i_row1, i_row2));   // rows of geom_xmat -> matrix
    vec3 world = i_pos + rot * p;
    v_world = world;
    v_normal = rot * n;
    v_local = in_pos;
    v_scaled = p;
    v_color = i_color;
    v_material = i_material;
    v_texmap = i_texmap;
    v_shadow0 = u_shadow_vp[0] * vec4(world, 1.0);
    v_shadow1 = u_shadow_vp[1] * vec4(world, 1.0);
    gl_ClipDistance[0] = dot(u_clip_plane, vec4(world, 1.0));
    gl_Position = u_viewproj * (u_reflect * vec4(world, 1.0));
}
