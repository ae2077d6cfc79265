#version 330 core
// The skybox: the model's cube texture seen along each pixel's ray, MuJoCo's orientation (the
// texture's up face is world +z), fading into the haze colour at the horizon; or, without a
// skybox, a flat colour (u_flat.a = 1: the background over what the mirror pass left).

in vec4 v_near;
in vec4 v_far;

uniform samplerCube u_sky;
uniform vec3 u_haze_color;
uniform float u_haze;                 // elevation (sine) over which the horizon is hazy
uniform vec4 u_flat;                  // rgb and 1: this colour instead of the sky

out vec4 f_color;

void main() {
    vec3 d = normalize(v_far.xyz / v_far.w - v_near.xyz / v_near.w);
    vec3 c = texture(u_sky, vec3(d.x, d.z, -d.y)).rgb;
    float h = u_haze > 0.0 ? 1.0 - smoothstep(0.0, u_haze, abs(d.z)) : 0.0;
    f_color = vec4(u_flat.a > 0.5 ? u_flat.rgb : mix(c, u_haze_color, h), 1.0);
}
